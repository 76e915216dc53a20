from dupes.finder import repeated


def test_empty():
    assert repeated([]) == []


def test_strings_and_order():
    assert repeated(["b", "a", "b", "a", "c", "b"]) == ["b", "a"]


def test_many_keys():
    keys = [(i * 7) % 50 for i in range(120)]
    expected = []
    counts = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
        if counts[key] == 2:
            expected.append(key)
    assert repeated(keys) == expected
