from dupes.finder import repeated


def test_no_repeats():
    assert repeated([1, 2, 3]) == []


def test_each_repeat_once_in_order_of_second_occurrence():
    assert repeated([3, 1, 3, 2, 1, 3, 2]) == [3, 1, 2]
