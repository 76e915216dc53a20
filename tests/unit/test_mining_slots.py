"""Run slots: never more holders than slots, and a free slot goes to the lowest rank waiting."""

from __future__ import annotations

import threading
import time

import pytest

from harnessdrive.mining.slots import Rank, RunSlots


def wait_until(condition: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.001)


def test_a_free_slot_goes_to_the_oldest_commit_and_its_earliest_step() -> None:
    slots = RunSlots(1)
    order: list[Rank] = []

    def take(rank: Rank) -> None:
        with slots.held(rank):
            order.append(rank)

    with slots.held((0, 0)):
        threads = [threading.Thread(target=take, args=(r,)) for r in [(3, 0), (1, 2), (1, 1)]]
        for thread in threads:
            thread.start()
        wait_until(lambda: slots.waiting == 3)
    for thread in threads:
        thread.join()
    assert order == [(1, 1), (1, 2), (3, 0)]


@pytest.mark.parametrize("size", [1, 2, 3])
def test_never_more_holders_than_slots(size: int) -> None:
    slots = RunSlots(size)
    holding = 0
    most = 0
    guard = threading.Lock()
    all_waiting = threading.Event()
    ready = threading.Barrier(12, action=all_waiting.set)

    def take(n: int) -> None:
        nonlocal holding, most
        ready.wait()
        with slots.held((n % 4, n)):
            with guard:
                holding += 1
                most = max(most, holding)
            time.sleep(0.005)  # a stand-in for a test run, so holders overlap
            with guard:
                holding -= 1

    threads = [threading.Thread(target=take, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all_waiting.is_set()
    assert most == size
    assert slots.waiting == 0


def test_at_least_one_slot() -> None:
    with pytest.raises(ValueError):
        RunSlots(0)
