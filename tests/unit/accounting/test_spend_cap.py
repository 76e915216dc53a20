"""The spend cap's decisions, and its promise: spend passes the cap by at most one estimate."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harnessdrive.accounting.spend_cap import SpendCap


def test_start_wait_stop() -> None:
    cap = SpendCap(Decimal(1), counted=Decimal("0.25"))
    first = cap.decide()
    assert (first.action, first.budget) == ("start", Decimal("0.75"))
    cap.reserve("a", Decimal("0.5"))
    second = cap.decide()
    assert (second.action, second.budget) == ("start", Decimal("0.25"))
    cap.reserve("b", Decimal("0.5"))
    assert cap.decide().action == "wait"
    cap.settle("a", Decimal("0.4"))  # a cost $0.15: room again
    assert (cap.decide().action, cap.decide().budget) == ("start", Decimal("0.1"))
    cap.settle("b", Decimal("1.3"))
    stop = cap.decide()
    assert stop.action == "stop"
    assert stop.reason == "spend cap reached: $1.30 counted of the $1 cap; a higher cap runs it"


def test_a_cap_must_be_positive() -> None:
    with pytest.raises(ValueError, match="more than"):
        SpendCap(Decimal(0))


amounts = st.decimals(min_value=0, max_value=5, places=2)


@settings(max_examples=200, deadline=None)
@given(
    limit=st.decimals(min_value="0.01", max_value=10, places=2),
    trials=st.lists(st.tuples(amounts, st.floats(0, 1)), min_size=1, max_size=30),
    jobs=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_spend_passes_the_cap_by_at_most_one_high_estimate(
    limit: Decimal, trials: list[tuple[Decimal, float]], jobs: int, seed: int
) -> None:
    """A driver with ``jobs`` workers; each trial costs a fraction of its high estimate, and
    trials finish in any order."""
    order = random.Random(seed)
    cap = SpendCap(limit)
    queue = list(enumerate(trials))
    running: dict[str, Decimal] = {}
    highest_started = Decimal(0)
    while queue or running:
        while queue and len(running) < jobs:
            decision = cap.decide()
            if decision.action == "stop":
                queue.clear()
                break
            if decision.action == "wait":
                assert running, "waiting with nothing running would never end"
                break
            number, (high, fraction) = queue.pop(0)
            key = str(number)
            cap.reserve(key, high)
            running[key] = (high * Decimal(fraction)).quantize(Decimal("0.0001"))
            highest_started = max(highest_started, high)
        if running:
            key = order.choice(sorted(running))
            cap.settle(key, cap.counted + running.pop(key))
    assert cap.counted < limit + highest_started or cap.counted <= limit
