"""The betting confidence sequence and the run-until-decided rules built on it."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessdrive.stats.sequential import BettingSequence, decide, tracked_points
from harnessdrive.stats.sequential_design import (
    DecisionSettings,
    Outcome,
    fixed_design_passes,
    follow,
    repeats_needed,
    slot_plan,
)
from harnessdrive.store.decisions_file import DecisionRules, DecisionsFile, PairDecision


def _paired(rng: random.Random, first: float, second: float) -> int:
    return int(rng.random() < first) - int(rng.random() < second)


@pytest.mark.parametrize(("first", "second"), [(0.5, 0.5), (0.7, 0.4), (0.1, 0.9), (1.0, 0.95)])
def test_the_sequence_rarely_ever_excludes_the_true_mean_with_a_look_after_every_sample(
    first: float, second: float
) -> None:
    # 400 seeded runs of 300 paired samples each, looked at after every sample: the true mean
    # may leave the 95% sequence at some time in at most 5% of runs (Ville's inequality).
    true = first - second
    misses = 0
    for seed in range(400):
        rng = random.Random(seed)
        sequence = BettingSequence(0.05, (true,), grid=False)
        for _ in range(300):
            sequence.add(_paired(rng, first, second))
            if sequence.above(true) or sequence.below(true):
                misses += 1
                break
    assert misses <= 20


def test_a_fixed_t_test_looked_at_as_often_is_fooled_far_more_often() -> None:
    # The contrast that makes the check above worth having: the naive interval, recomputed
    # after every sample, excludes the truth in far more than 5% of the same runs.
    misses = 0
    for seed in range(200):
        rng = random.Random(seed)
        total = squares = 0.0
        for n in range(1, 301):
            value = _paired(rng, 0.5, 0.5)
            total += value
            squares += value * value
            if n >= 10:
                mean = total / n
                spread = max((squares / n - mean * mean) * n / (n - 1), 1e-12) ** 0.5
                if abs(mean) > 1.96 * spread / n**0.5:
                    misses += 1
                    break
    assert misses > 20


def test_the_interval_narrows_around_the_mean_and_never_widens() -> None:
    rng = random.Random(7)
    sequence = BettingSequence(0.05)
    widths = []
    for _ in range(400):
        sequence.add(_paired(rng, 0.8, 0.3))
        interval = sequence.interval
        widths.append(interval.upper - interval.lower)
        assert interval.lower <= interval.upper
    assert widths == sorted(widths, reverse=True)  # a running intersection
    assert widths[-1] < 0.4
    assert sequence.interval.lower < 0.5 < sequence.interval.upper
    assert sequence.interval.excludes_zero()


def test_decisions_read_zero_and_the_margin() -> None:
    better = BettingSequence(0.05, tracked_points(None), grid=False)
    for _ in range(8):
        better.add(1.0)
    assert decide(better, None) == "better"
    worse = BettingSequence(0.05, tracked_points(None), grid=False)
    for _ in range(8):
        worse.add(-1.0)
    assert decide(worse, None) == "worse"
    same = BettingSequence(0.05, tracked_points(0.5), grid=False)
    for _ in range(3):
        same.add(0.0)
    assert decide(same, 0.5) is None  # three ties are not yet evidence of anything
    for _ in range(30):
        same.add(0.0)
    assert decide(same, 0.5) == "equivalent"
    assert decide(same, None) is None


def test_bad_values_are_refused() -> None:
    with pytest.raises(ValueError, match="alpha"):
        BettingSequence(1.5)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        BettingSequence(0.05).add(1.5)


def _world(rates: dict[str, float], seed: int) -> Callable[[str, str, int], Outcome]:
    def outcome(arm: str, task: str, repetition: int) -> Outcome:
        passed = random.Random(f"{seed}/{arm}/{task}/{repetition}").random() < rates[arm]
        return Outcome(passed, usd=0.1)

    return outcome


TASKS = [f"t{i}" for i in range(6)]


def test_follow_decides_each_pair_and_stops_reading_at_its_decision() -> None:
    settings = DecisionSettings(max_repeats=20, margin=0.3)
    outcome = _world({"strong": 0.95, "weak": 0.05, "twin": 0.95}, seed=1)
    states = {s.pair: s for s in follow(["strong", "weak", "twin"], TASKS, outcome, settings)}
    assert states[("strong", "weak")].verdict == "better"
    assert states[("weak", "twin")].verdict == "worse"
    assert states[("strong", "twin")].verdict == "equivalent"
    budget = 2 * settings.max_repeats * len(TASKS)
    for state in states.values():
        assert state.trials == 2 * len(state.differences) < budget
        assert state.usd == pytest.approx(0.1 * state.trials)
        assert state.lower <= state.difference <= state.upper


def test_follow_waits_for_missing_trials_and_ends_inconclusive_at_the_budget() -> None:
    settings = DecisionSettings(max_repeats=3)
    coin = _world({"a": 0.5, "b": 0.5}, seed=2)
    [full] = follow(["a", "b"], TASKS, coin, settings)
    assert full.verdict == "inconclusive" and "budget" in full.reason
    assert full.trials == 2 * 3 * len(TASKS)

    def first_pass_only(arm: str, task: str, repetition: int) -> Outcome | None:
        return coin(arm, task, repetition) if repetition == 1 else None

    [waiting] = follow(["a", "b"], TASKS, first_pass_only, settings)
    assert waiting.open and waiting.slots_read == 0 and waiting.trials == 2 * len(TASKS)
    seen: list[object] = []

    def cap(pair: tuple[str, str], waiting: list[tuple[str, str, int]]) -> str:
        seen.append(waiting)
        return "the cap"

    [stopped] = follow(["a", "b"], TASKS, first_pass_only, settings, stopped=cap)
    assert stopped.verdict == "inconclusive" and stopped.reason == "the cap"
    task, repetition = slot_plan(TASKS, 3)[0]
    assert seen == [[("a", task, repetition), ("b", task, repetition)]]


def test_the_slots_are_fixed_by_the_tasks_and_the_budget_alone() -> None:
    slots = slot_plan(TASKS, 10)
    assert slots == slot_plan(TASKS, 10)
    assert len(slots) == 9 * len(TASKS)
    assert {task for task, _ in slots} == set(TASKS)
    for task in TASKS:  # each task's repetitions count up from 2 (1 is the first pass)
        assert [r for t, r in slots if t == task] == list(
            range(2, 2 + len([t for t, _ in slots if t == task]))
        )
    assert repeats_needed(TASKS, 10) == max(r for _, r in slots)


def test_a_fixed_design_estimate_needs_more_for_a_smaller_difference() -> None:
    settings = DecisionSettings(max_repeats=20)
    large = [1] * 40 + [0] * 20
    small = [1] * 30 + [0] * 20 + [-1] * 10
    big = fixed_design_passes(large, 6, 0.05, settings, "better", seed="x")
    little = fixed_design_passes(small, 6, 0.05, settings, "better", seed="x")
    assert big is not None and little is not None and big < little


def test_every_field_of_the_decisions_file_is_documented() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "report.md").read_text()
    section = text[text.index("### `decisions/<run_id>.json`") :]
    for model in (DecisionsFile, DecisionRules, PairDecision):
        names = [info.alias or name for name, info in model.model_fields.items()]
        missing = [name for name in names if f"`{name}`" not in section]
        assert missing == [], f"{model.__name__}: {missing}"
