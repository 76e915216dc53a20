"""The comparison model pinned to scipy and statsmodels on known data: one task, all pass
against all fail, ties, unequal repeats, zero passes, a 5-of-5 sweep; and the rules every view
relies on (ranking, baselines, Holm with matching intervals, the reasons an answer is open)."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as scipy_stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from harnessdrive.stats.answer import answer
from harnessdrive.stats.bayes import probability_better
from harnessdrive.stats.cost import mean_interval_t
from harnessdrive.stats.decisions import ArmInput, decide
from harnessdrive.stats.pair_test import fewest_tasks_for, pair_interval, paired_tasks
from harnessdrive.stats.rates import arm_rate
from harnessdrive.stats.settle import decides
from harnessdrive.stats.signflip import sign_flip_test
from harnessdrive.stats.student import t_quantile, t_two_sided_p
from harnessdrive.stats.tango import restricted_second_only, score_statistic, tango_interval

DOCS = Path(__file__).resolve().parents[2] / "docs"


def once(passes: list[int]) -> dict[str, list[float]]:
    """One trial per task: t00, t01, ... passing where ``passes`` has a 1."""
    return {f"t{i:02d}": [float(p)] for i, p in enumerate(passes)}


@pytest.mark.parametrize("df", [1, 2, 5, 11, 40])
@pytest.mark.parametrize("probability", [0.6, 0.975, 0.99583])
def test_t_quantile_and_p_match_scipy(df: int, probability: float) -> None:
    expected = scipy_stats.t.ppf(probability, df)
    assert t_quantile(probability, df) == pytest.approx(expected, rel=1e-8)
    assert t_two_sided_p(expected, df) == pytest.approx(2 * (1 - probability), rel=1e-6)


def _scipy_sign_flip(differences: list[float]) -> float:
    found = scipy_stats.permutation_test(
        (np.array(differences),),
        np.mean,
        permutation_type="samples",
        n_resamples=10**9,
        alternative="two-sided",
    )
    return float(found.pvalue)


@pytest.mark.parametrize("seed", range(12))
def test_the_sign_flip_test_matches_scipys_exact_permutation_test(seed: int) -> None:
    rng = random.Random(seed)
    tasks = rng.randint(2, 11)
    first, second = rng.choice([1, 2, 4]), rng.choice([1, 3, 5])  # unequal repeats too
    grid = [rng.randint(0, first) / first - rng.randint(0, second) / second for _ in range(tasks)]
    if abs(sum(grid)) > 1e-9:
        assert sign_flip_test(grid).p_value == pytest.approx(_scipy_sign_flip(grid), abs=1e-12)
    scores = [rng.random() - 0.4 for _ in range(tasks)]
    assert sign_flip_test(scores).p_value == pytest.approx(_scipy_sign_flip(scores), abs=1e-12)


def test_the_sign_flip_test_is_exact_at_fifty_tasks_and_states_its_monte_carlo_error() -> None:
    rng = random.Random(5)
    grid = [rng.randint(0, 4) / 4 - rng.randint(0, 4) / 4 for _ in range(50)]
    exact = sign_flip_test(grid)
    assert exact.method == "exact" and exact.error == 0
    assert exact.arrangements == 2 ** sum(d != 0 for d in grid)
    scores = [rng.random() - 0.35 for _ in range(14)]
    drawn = sign_flip_test(scores)
    assert drawn.method == "Monte Carlo" and 0 < drawn.error < 0.01
    assert abs(drawn.p_value - _scipy_sign_flip(scores)) < 4 * drawn.error
    # A clean sweep of six tasks: 2 / 2^6, the same as McNemar's.
    assert sign_flip_test([1.0] * 6).p_value == pytest.approx(1 / 32)
    assert sign_flip_test([0.0] * 6).p_value == 1.0


def _scipy_restricted(c12: int, c21: int, n: int, d: float) -> float:
    rest = n - c12 - c21

    def minus_log_likelihood(p: float) -> float:
        return -(
            c12 * math.log(p + d + 1e-300)
            + c21 * math.log(p + 1e-300)
            + rest * math.log(1 - 2 * p - d)
        )

    low, high = max(0.0, -d) + 1e-12, (1 - d) / 2 - 1e-12
    found = optimize.minimize_scalar(
        minus_log_likelihood, bounds=(low, high), method="bounded", options={"xatol": 1e-12}
    )
    return float(found.x)


@pytest.mark.parametrize(
    ("c12", "c21", "n"), [(9, 2, 44), (3, 5, 20), (6, 0, 6), (0, 0, 8), (0, 6, 6), (1, 0, 1)]
)
def test_tangos_interval_inverts_the_score_test_with_scipys_maximum_likelihood(
    c12: int, c21: int, n: int
) -> None:
    for d in (-0.5, -0.1, 0.2, 0.4):
        if n - c12 - c21 > 0 or c21:
            expected = _scipy_restricted(c12, c21, n, d)
            assert restricted_second_only(c12, c21, n, d) == pytest.approx(expected, abs=1e-6)
    found = tango_interval(c12, c21, n)
    z = scipy_stats.norm.ppf(0.975)
    for edge in (found.low, found.high):
        if -1 < edge < 1:
            assert abs(score_statistic(c12, c21, n, edge)) == pytest.approx(z, abs=1e-6)
    assert found.width > 0.1  # never zero-width, even with no task differing
    assert found.low <= (c12 - c21) / n <= found.high


def test_mcnemar_and_holm_and_wilson_agree_with_statsmodels() -> None:
    first = once([1, 1, 1, 1, 1, 1, 1, 0, 1, 0])
    second = once([0, 0, 1, 0, 0, 0, 1, 0, 1, 1])
    decided = decide([ArmInput("A", first), ArmInput("B", second)], settle=False)
    (comparison,) = decided.comparisons
    table = [[2, 5], [1, 2]]  # both, only A; only B, neither
    assert comparison.p_value == pytest.approx(sm_mcnemar(table, exact=True).pvalue)
    p_values = [0.01, 0.04, 0.03, 0.2]
    from harnessdrive.stats.multiple import holm

    assert holm(p_values) == pytest.approx(list(multipletests(p_values, method="holm")[1]))
    low, high = proportion_confint(8, 10, method="wilson")
    rate = arm_rate(first)
    assert rate is not None and rate.effective_trials == 10
    assert (rate.interval.low, rate.interval.high) == pytest.approx((low, high))


def test_a_t_interval_over_tasks_with_repeats_matches_scipy() -> None:
    first = {"a": [1.0, 1.0, 0.0], "b": [1.0, 0.0, 0.0], "c": [1.0, 1.0, 1.0], "d": [0.0, 1.0, 1.0]}
    second = {
        "a": [0.0, 0.0, 0.0],
        "b": [1.0, 0.0, 0.0],
        "c": [0.0, 1.0, 1.0],
        "d": [0.0, 0.0, 1.0],
    }
    tasks = paired_tasks(first, second)
    found, method = pair_interval(tasks, 0.95)
    differences = [t.difference for t in tasks]
    expected = scipy_stats.ttest_1samp(differences, 0.0).confidence_interval(0.95)
    assert method == "t over tasks" and found is not None
    assert (found.low, found.high) == pytest.approx((expected.low, expected.high))
    costs = [0.3, 0.5, 0.45, 0.2]
    cost = mean_interval_t(costs, 0.9)
    reference = scipy_stats.ttest_1samp(costs, 0.0).confidence_interval(0.9)
    assert cost is not None and (cost.low, cost.high) == pytest.approx(
        (reference.low, reference.high)
    )


def test_one_task_has_no_interval_and_says_why_it_is_open() -> None:
    decided = decide([ArmInput("A", once([1])), ArmInput("B", once([0]))])
    (c,) = decided.comparisons
    assert c.interval is None and c.verdict == "inconclusive"
    assert c.reason == "1 task in common; a verdict needs at least 2"


def test_all_pass_against_all_fail() -> None:
    decided = decide([ArmInput("A", once([1] * 6)), ArmInput("B", once([0] * 6))])
    (c,) = decided.comparisons
    assert (c.verdict, c.p_value, c.test) == ("better", 1 / 32, "exact McNemar")
    assert c.interval is not None and 0 < c.interval.low < c.interval.high == 1.0
    # Five tasks cannot: 2 / 2^5 = 0.0625.
    five = decide([ArmInput("A", once([1] * 5)), ArmInput("B", once([0] * 5))]).comparisons[0]
    assert five.verdict == "inconclusive" and five.reason == ("5 tasks; a verdict needs at least 6")
    assert five.settle is not None and five.settle.more_tasks == 1


def test_ties_are_never_a_zero_width_interval_and_rank_together() -> None:
    same = once([1, 0, 1, 0, 1, 0, 1, 0])
    decided = decide([ArmInput("A", same), ArmInput("B", dict(same))])
    (c,) = decided.comparisons
    assert c.difference == 0 and c.interval is not None and c.interval.width > 0.2
    assert c.verdict == "inconclusive" and c.p_better == pytest.approx(0.5, abs=0.03)
    assert [a.rank for a in decided.arms] == [1, 1] and decided.best is None
    assert decided.tied == ("A", "B") and answer(decided).startswith("Tied: A and B, 50%")
    repeated = {t: [1.0, 1.0] for t in "abcdef"}
    none = {t: [0.0, 0.0, 0.0] for t in "abcdef"}
    sweep = decide([ArmInput("A", repeated), ArmInput("B", none)]).comparisons[0]
    # Every task differs by exactly 1: the t interval would have no width.
    assert sweep.interval is not None and sweep.interval.width > 0.1
    assert sweep.interval_method.startswith("Wilson's score on the difference")


def test_unequal_repeats_are_averaged_within_a_task_and_said() -> None:
    rng = random.Random(2)
    rates = [rng.random() for _ in range(12)]
    first = {f"t{i}": [float(rng.random() < r)] for i, r in enumerate(rates)}
    second = {f"t{i}": [float(rng.random() < r) for _ in range(5)] for i, r in enumerate(rates)}
    c = decide([ArmInput("A", first), ArmInput("B", second)]).comparisons[0]
    assert c.unequal_repeats and c.design == "repeats"
    assert c.test.startswith("sign-flip permutation test") and "exact" in c.test
    differences = [np.mean(first[t]) - np.mean(second[t]) for t in first]
    assert c.difference == pytest.approx(float(np.mean(differences)))
    assert c.p_value == pytest.approx(_scipy_sign_flip(differences), abs=1e-12)


def test_zero_passes_and_a_five_of_five_sweep() -> None:
    zero = arm_rate(once([0] * 8))
    assert zero is not None and zero.rate == 0 and zero.interval.low == 0
    assert zero.interval.high == pytest.approx(proportion_confint(0, 8, method="wilson")[1])
    sweep = arm_rate({f"t{i}": [1.0] * 5 for i in range(8)})
    single = arm_rate(once([1] * 8))
    assert sweep is not None and single is not None
    assert sweep.interval.width > 0 and sweep.interval.high == pytest.approx(1)
    # Repeats that agree narrow the interval: 40 trials, not 8 tasks.
    assert sweep.interval.low > single.interval.low
    assert sweep.effective_trials == 40


def test_repeats_narrow_a_rate_interval_only_as_far_as_their_agreement_allows() -> None:
    rng = random.Random(4)
    rates = [rng.random() for _ in range(20)]
    one = arm_rate({f"t{i}": [float(rng.random() < r)] for i, r in enumerate(rates)})
    five = arm_rate(
        {f"t{i}": [float(rng.random() < r) for _ in range(5)] for i, r in enumerate(rates)}
    )
    assert one is not None and five is not None
    assert five.interval.width < one.interval.width
    assert 20 <= five.effective_trials <= 100


def test_p_better_is_symmetric_and_never_certain_from_a_few_tasks() -> None:
    up = probability_better([1.0, 1.0, 0.0, 0.0])
    assert up == pytest.approx(1 - probability_better([-1.0, -1.0, 0.0, 0.0]), abs=0.03)
    assert 0.7 < up < 0.98
    assert probability_better([0.3] * 40) > 0.99


def test_the_fewest_tasks_a_family_can_decide_with() -> None:
    assert fewest_tasks_for(0.05) == 6
    assert fewest_tasks_for(0.05 / 3) == 7
    assert fewest_tasks_for(0.05 / 6) == 8


def test_holm_steps_decide_with_intervals_at_their_own_level() -> None:
    best = once([1] * 12)
    middle = once([1] * 6 + [0] * 6)
    worst = once([0] * 12)
    decided = decide(
        [ArmInput("A", best), ArmInput("B", middle), ArmInput("C", worst)], settle=False
    )
    assert decided.family == 3
    by_pair = {(c.first, c.second): c for c in decided.comparisons}
    assert by_pair["A", "C"].threshold == pytest.approx(0.05 / 3)
    assert by_pair["A", "C"].level == pytest.approx(1 - 0.05 / 3)
    assert by_pair["A", "C"].verdict == "better"
    # Six tasks differ in each of the others: p = 1/32 > 0.025, and never below 0.0167.
    for pair in (("A", "B"), ("B", "C")):
        c = by_pair[pair]
        assert c.verdict == "inconclusive"
        assert (
            c.reason
            == "6 of 12 tasks differ; with 3 comparisons a verdict needs at least 7 that differ"
        )
    for c in decided.comparisons:
        assert (c.verdict in ("better", "worse")) == (
            c.p_adjusted < 0.05
            and c.interval is not None
            and (c.interval.low > 0 or c.interval.high < 0)
        )


def test_a_p_that_misses_its_step_says_so_and_a_margin_gives_equivalence() -> None:
    rng = random.Random(9)
    first = {f"t{i}": [float(rng.random() < 0.7)] for i in range(30)}
    second = {f"t{i}": [float(rng.random() < 0.45)] for i in range(30)}
    c = decide([ArmInput("A", first), ArmInput("B", second)], settle=False).comparisons[0]
    assert re.fullmatch(r"p = [\d.]+, needs < 0\.05", c.reason or "") or c.verdict != "inconclusive"
    same = {f"t{i}": [1.0] * 4 for i in range(40)}
    close = {f"t{i}": [1.0] * 4 if i else [1.0, 1.0, 1.0, 0.0] for i in range(40)}
    found = decide([ArmInput("A", same), ArmInput("B", close)], margin=0.1).comparisons[0]
    assert found.verdict == "equivalent"
    loose = decide([ArmInput("A", same), ArmInput("B", close)], margin=0.001).comparisons[0]
    assert loose.verdict == "inconclusive" and "not within ±0 points" in (loose.reason or "")


@pytest.mark.parametrize("seed", range(20))
def test_no_arm_outranks_a_higher_rate_and_no_baseline_is_best(seed: int) -> None:
    rng = random.Random(seed)
    tasks = [f"t{i}" for i in range(rng.randint(1, 8))]
    arms = [
        ArmInput(
            f"arm{k}",
            {t: [float(rng.random() < 0.6) for _ in range(rng.randint(1, 4))] for t in tasks},
            baseline=rng.random() < 0.4,
        )
        for k in range(rng.randint(2, 5))
    ]
    decided = decide(arms, settle=False)
    rates = {a.name: a.rate for a in decided.arms}
    for a in decided.arms:
        for b in decided.arms:
            if rates[a.name] > rates[b.name] + 1e-9:
                assert a.rank < b.rank
            if abs(rates[a.name] - rates[b.name]) < 1e-9:
                assert a.rank == b.rank
    baselines = {arm.name for arm in arms if arm.baseline}
    assert decided.best not in baselines
    if decided.best is not None:
        real = [a for a in decided.arms if a.name not in baselines]
        assert rates[decided.best] == max(a.rate for a in real)
    if baselines and len(baselines) < len(arms):
        assert not any({c.first, c.second} & baselines for c in decided.comparisons)


def test_the_worked_example_of_the_report_doc_runs() -> None:
    text = (DOCS / "report.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S)
    assert code is not None
    exec(compile(code.group(1), "report.md", "exec"), {})


@pytest.mark.parametrize("seed", range(15))
def test_the_simulated_rule_is_the_rule_that_decides(seed: int) -> None:
    rng = random.Random(seed)
    repeats = rng.choice([1, 1, 3])
    tasks = [f"t{i}" for i in range(rng.randint(2, 14))]
    first = {t: [float(rng.random() < 0.8) for _ in range(repeats)] for t in tasks}
    second = {t: [float(rng.random() < 0.35) for _ in range(repeats)] for t in tasks}
    (c,) = decide([ArmInput("A", first), ArmInput("B", second)], settle=False).comparisons
    assert decides(paired_tasks(first, second), c.threshold, None, 2) == (
        c.verdict != "inconclusive"
    )


def test_more_comparisons_need_more_tasks_to_settle() -> None:
    first = once([1, 1, 1, 1, 0, 1, 1, 0])
    second = once([0, 1, 0, 0, 0, 1, 0, 0])
    alone = decide([ArmInput("A", first), ArmInput("B", second)]).comparisons[0]
    third = once([1, 0, 1, 0, 1, 0, 1, 0])
    fourth = once([0, 0, 1, 1, 0, 0, 1, 1])
    many = decide(
        [ArmInput("A", first), ArmInput("B", second), ArmInput("C", third), ArmInput("D", fourth)]
    ).between("A", "B")
    assert alone.settle is not None and many is not None and many.settle is not None
    assert alone.settle.more_tasks is not None and many.settle.more_tasks is not None
    assert many.threshold < alone.threshold
    assert many.settle.more_tasks > alone.settle.more_tasks
