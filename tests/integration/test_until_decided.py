"""``harnessdrive run --until-decided`` on arms whose pass rates are known in advance.

The arms are the seeded chance agent (or shell commands that always or never fix), so every
trial's outcome is known before the run: the decisions the command records are checked against
the decision code run directly on those outcomes, trial for trial.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.cli.variants import resolve_variants
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.stats.sequential_design import (
    DecisionSettings,
    Outcome,
    PairState,
    follow,
    repeats_needed,
    slot_plan,
)
from harnessdrive.store.store import Store
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.chance import solves
from harnessdrive.testing.suites import TaskFiles, write_suite
from tests.integration.spending import SMALL_HIGH, make_suite, small_calls, spender, write_prices
from tests.waiting import trials_under_way, wait_until

pytestmark = pytest.mark.slow

CHANCE = "harnessdrive.testing.chance:ChanceAgent"
ARMS = {"strong": (0, 0.9), "weak": (1, 0.1), "twin": (2, 0.9)}
"""Each arm's seed and pass rate on every task."""
TASKS = [f"t{i}" for i in range(4)]
MAX_REPEATS = 15


def _task(task_id: str) -> TaskFiles:
    # A shell check keeps grading cheap; the decisions do not care what decides a pass.
    return TaskFiles(
        task_id,
        files={"state.txt": "broken\n"},
        hidden={"check.sh": "grep -qx fixed state.txt\n"},
        solution={"state.txt": "fixed\n"},
        command="sh check.sh",
    )


def _decisions(results: Path, run_id: str | None = None) -> dict[str, Any]:
    """The decisions file of ``run_id``, or the folder's only one."""
    found = [json.loads(p.read_text()) for p in (results / "decisions").glob("*.json")]
    chosen = [d for d in found if run_id in (None, d["run_id"])]
    assert len(chosen) == 1, [d["run_id"] for d in found]
    data: dict[str, Any] = chosen[0]
    return data


def _standing(results: Path) -> set[tuple[str, str, int]]:
    """(arm, task, repetition) of every trial the folder holds a standing result for."""
    return {(r.variant_label, r.task, r.repetition) for r in Store(results).all_latest()}


def _read_by(states: list[PairState], tasks: list[str], max_repeats: int) -> set[Any]:
    """The trials the pairs read up to their decisions: all a run should have taken."""
    slots = slot_plan(tasks, max_repeats)
    needed = set()
    for state in states:
        cells = [(t, 1) for t in tasks] + slots[: state.slots_read]
        needed |= {(arm, task, rep) for arm in state.pair for task, rep in cells}
    return needed


def _agree(recorded: dict[str, Any], expected: list[PairState]) -> None:
    pairs = {(p["first"], p["second"]): p for p in recorded["pairs"]}
    for state in expected:
        found = pairs[state.pair]
        assert found["verdict"] == state.verdict
        assert found["trials"] == state.trials
        assert found["difference"] == pytest.approx(state.difference)
        assert (found["lower"], found["upper"]) == pytest.approx((state.lower, state.upper))


@pytest.fixture(scope="module")
def chance_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    parent = tmp_path_factory.mktemp("until")
    arms = [
        {"harness": CHANCE, "name": name, "options": {"rate": rate, "seed": seed}}
        for name, (seed, rate) in ARMS.items()
    ]
    suite = write_suite(parent, [_task(t) for t in TASKS], name="known", variants=arms)
    results = parent / "results"
    command = [
        "run",
        str(suite),
        "--until-decided",
        "--margin",
        "0.5",
        "--max-repeats",
        str(MAX_REPEATS),
        "--sandbox",
        "none",
        "--jobs",
        "2",
        "--results",
        str(results),
    ]
    completed = subprocess.run(
        [sys.executable, "-m", "harnessdrive.cli", *command],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    return suite, results, completed.stdout + completed.stderr


def _expected_chance(settings: DecisionSettings) -> list[PairState]:
    def outcome(arm: str, task: str, repetition: int) -> Outcome:
        seed, rate = ARMS[arm]
        return Outcome(solves(seed, task, repetition, rate))

    return follow(list(ARMS), TASKS, outcome, settings)


def test_it_reaches_the_right_verdicts_with_the_trials_they_need_and_no_more(
    chance_run: tuple[Path, Path, str],
) -> None:
    _, results, output = chance_run
    recorded = _decisions(results)
    verdicts = {(p["first"], p["second"]): p["verdict"] for p in recorded["pairs"]}
    assert verdicts == {
        ("strong", "weak"): "better",
        ("strong", "twin"): "equivalent",
        ("weak", "twin"): "worse",
    }
    assert recorded["finished"] and recorded["rules"]["margin"] == 0.5
    expected = _expected_chance(DecisionSettings(margin=0.5, max_repeats=MAX_REPEATS))
    _agree(recorded, expected)
    # It stopped early: it ran exactly what the decisions read, far under the budget.
    taken = _standing(results)
    assert taken == _read_by(expected, TASKS, MAX_REPEATS)
    assert recorded["trials"] == len(taken) < len(ARMS) * len(TASKS) * MAX_REPEATS / 2
    assert "Decided: strong better than weak" in output
    assert "Decided: strong equivalent to twin" in output
    assert "Decided: weak worse than twin" in output
    assert "Until decided: 3 of 3 comparison(s) decided" in output
    assert "a fixed design of the same power" in output


def test_report_shows_the_decisions_in_every_format(
    chance_run: tuple[Path, Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, results, _ = chance_run
    for shown in ("text", "markdown"):
        assert run_cli(["report", "--results", str(results), "--format", shown]) == 0
        assert "Decided: strong better than weak" in capsys.readouterr().out
    assert run_cli(["report", "--results", str(results), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(note.startswith("Decided: weak worse than twin") for note in notes)


def test_the_same_command_again_runs_nothing_and_decides_the_same(
    chance_run: tuple[Path, Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    suite, results, _ = chance_run
    before = _decisions(results)
    folders = sorted(results.glob("trials/**/result.json"))
    common = ["--max-repeats", str(MAX_REPEATS), "--sandbox", "none", "--results", str(results)]
    assert run_cli(["run", str(suite), "--until-decided", "--margin", "0.5", *common]) == 0
    assert sorted(results.glob("trials/**/result.json")) == folders
    assert _decisions(results) == before
    assert "trials already recorded; resuming" in capsys.readouterr().err
    # The rules cannot change after the data were seen.
    assert run_cli(["run", str(suite), "--until-decided", "--margin", "0.3", *common]) == 2
    # (Its last line: a sweep of scratch left by other stopped runs may be reported first.)
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(
        "error: these arms were compared on this suite with confidence 0.95 and margin 0.5"
    )
    assert "--margin" in error
    assert _decisions(results) == before
    # A larger budget reads on along the same slots: decided pairs stay as they were, and
    # nothing new runs (every pair was decided within the smaller budget).
    more = ["--max-repeats", str(2 * MAX_REPEATS), "--sandbox", "none", "--results", str(results)]
    assert run_cli(["run", str(suite), "--until-decided", "--margin", "0.5", *more]) == 0
    assert sorted(results.glob("trials/**/result.json")) == folders
    later = [json.loads(p.read_text()) for p in (results / "decisions").glob("*.json")]
    assert len(later) == 2
    # (The fixed-design estimate depends on the budget; the decisions do not.)
    kept = ("first", "second", "verdict", "trials", "usd", "difference", "lower", "upper")
    for each in later:
        assert [{k: p[k] for k in kept} for p in each["pairs"]] == [
            {k: p[k] for k in kept} for p in before["pairs"]
        ]


def test_kill_9_mid_run_then_the_same_command_reaches_the_same_decisions(
    tmp_path: Path,
) -> None:
    tasks = [f"t{i}" for i in range(3)]
    suite = write_suite(tmp_path, [_task(t) for t in tasks], name="fixes")
    results = tmp_path / "results"
    command = [
        sys.executable,
        "-m",
        "harnessdrive.cli",
        "run",
        str(suite),
        "--cmd",
        "fixer=sleep 0.3; printf 'fixed\\n' > state.txt",
        "--cmd",
        "idler=sleep 0.3",
        "--until-decided",
        "--max-repeats",
        "10",
        "--sandbox",
        "none",
        "--jobs",
        "2",
        "--results",
        str(results),
    ]
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(
        lambda: len(list(results.glob("trials/**/result.json"))) >= 3 and trials_under_way(results),
        "three trials recorded and the next one under way",
        process=driver,
    )
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    in_flight = [json.loads(p.read_text())["trial_id"] for p in results.glob("inflight/*.json")]
    assert in_flight, "the kill should have caught a trial under way"

    finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "already recorded; resuming" in finished.stderr
    assert "Decided: fixer better than idler" in finished.stderr

    # What an uninterrupted run decides, from the outcomes known in advance.
    def outcome(arm: str, task: str, repetition: int) -> Outcome:
        return Outcome(arm == "fixer")

    settings = DecisionSettings(max_repeats=10)
    expected = follow(["fixer", "idler"], tasks, outcome, settings)
    assert [s.verdict for s in expected] == ["better"]
    recorded = _decisions(results)
    _agree(recorded, expected)
    # Nothing ran that the decision did not read, and nothing counted twice: the trial caught
    # by the kill was recorded as interrupted and ran again as a new attempt.
    assert _standing(results) == _read_by(expected, tasks, 10)
    assert recorded["trials"] == expected[0].trials
    store = Store(results)
    for trial_id in in_flight:
        attempts = store.attempts(trial_id)
        assert [a.status for a in attempts[:-1]] in ([], ["interrupted"])
    assert not list((results / "inflight").glob("*.json"))


BAD = [
    (["--margin", "0.1"], "--margin goes with --until-decided"),
    (["--until-decided", "--repeat", "3"], "give --max-repeats, not --repeat"),
    (["--until-decided", "-H", "strong"], "name at least two, not 1"),
    (["--until-decided", "--margin", "1.5"], "--margin is a pass-rate difference"),
    (["--until-decided", "--max-repeats", "0"], "--max-repeats must be at least 1"),
    (["--until-decided", "--confidence", "1"], "--confidence lies in [0.5, 1)"),
]


@pytest.mark.parametrize(("flags", "message"), BAD)
def test_bad_flags_are_one_line_exit_2_and_touch_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    arms = [{"harness": CHANCE, "name": name} for name in ARMS]
    suite = write_suite(tmp_path, [_task("t0")], variants=arms)
    results = tmp_path / "results"
    assert run_cli(["run", str(suite), *flags, "--results", str(results)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert not results.exists()


def test_the_spend_cap_ends_the_open_comparisons_inconclusive(tmp_path: Path) -> None:
    # Each trial costs $0.01; the decision needs about 20 trials, the cap allows about 10.
    prices = write_prices(tmp_path)
    arms = [
        spender("solver", "mock-small", calls=small_calls(0.01)),
        spender("idler", "mock-small", calls=small_calls(0.01), solve=False),
    ]
    suite = make_suite(tmp_path, arms, tasks=3)
    results = tmp_path / "results"
    loaded = load_suite(suite)
    settings = DecisionSettings(max_repeats=10)
    tasks = [t.id for t in loaded.tasks]
    plan = make_plan(loaded, resolve_variants(loaded, []), repeats_needed(tasks, 10))
    options = RunOptions(
        results=results,
        sandbox="none",
        python=sys.executable,
        price_files=(prices,),
        max_usd=0.1,
        until_decided=settings,
    )
    summary = execute(plan, options)
    [pair] = _decisions(results)["pairs"]
    assert pair["verdict"] == "inconclusive"
    assert "spend cap" in pair["reason"]
    charged = sum(r.cost.charged_usd for r in Store(results).all_latest())
    assert charged <= 0.1 + SMALL_HIGH
    assert 6 <= pair["trials"] < 20  # past the first pass, short of the decision
    assert any("inconclusive, the spend cap was reached" in line for line in summary.decisions)


def test_with_more_workers_slots_run_ahead_and_the_decisions_stay_the_same(
    tmp_path: Path,
) -> None:
    arms = [
        {"harness": CHANCE, "name": name, "options": {"rate": ARMS[name][1], "seed": ARMS[name][0]}}
        for name in ("strong", "weak")
    ]
    suite = write_suite(tmp_path, [_task(t) for t in TASKS], name="ahead", variants=arms)
    results = tmp_path / "results"
    loaded = load_suite(suite)
    settings = DecisionSettings(max_repeats=MAX_REPEATS)
    plan = make_plan(loaded, resolve_variants(loaded, []), repeats_needed(TASKS, MAX_REPEATS))
    options = RunOptions(
        results=results, sandbox="none", python=sys.executable, jobs=6, until_decided=settings
    )
    execute(plan, options)

    def outcome(arm: str, task: str, repetition: int) -> Outcome:
        seed, rate = ARMS[arm]
        return Outcome(solves(seed, task, repetition, rate))

    expected = follow(["strong", "weak"], TASKS, outcome, settings)
    assert [s.verdict for s in expected] == ["better"]
    _agree(_decisions(results), expected)
    # Three slots at once (6 workers, 2 trials a slot): at most two slots' trials unread.
    needed = _read_by(expected, TASKS, MAX_REPEATS)
    taken = _standing(results)
    assert needed <= taken
    assert len(taken - needed) <= 2 * 2


def test_an_arm_that_cannot_run_leaves_its_comparison_inconclusive_with_the_reason(
    tmp_path: Path,
) -> None:
    arms = [spender("solver"), spender("broken")]
    arms[1]["options"]["could_not_run"] = True
    suite = make_suite(tmp_path, arms, tasks=2)
    results = tmp_path / "results"
    loaded = load_suite(suite)
    settings = DecisionSettings(max_repeats=5)
    plan = make_plan(loaded, resolve_variants(loaded, []), repeats_needed(["t0", "t1"], 5))
    options = RunOptions(
        results=results,
        sandbox="none",
        python=sys.executable,
        allow_unpriced=frozenset({"solver", "broken"}),
        max_usd=1.0,
        until_decided=settings,
    )
    summary = execute(plan, options)
    [pair] = _decisions(results)["pairs"]
    assert pair["verdict"] == "inconclusive"
    assert "could not run" in pair["reason"]
    # Its trials were not counted as failures, and nothing ran past the first sign of it.
    assert pair["trials"] == 0
    assert summary.ran <= 4
