"""What a running trial tells of itself: phases at once, counts throttled, a summary line."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from rich.console import Console

from harnessdrive.cli.progress import LiveProgress
from harnessdrive.protocols.phases import PhaseReporter, TrialPhase, phase, reporting
from harnessdrive.proxy.observers import context_observer
from harnessdrive.proxy.traffic import ProxiedCall
from harnessdrive.running.live_board import LiveBoard, RunningTrials, summarize
from harnessdrive.running.progress import PlainProgress
from harnessdrive.transcript.models import Usage

CALL = ProxiedCall(
    method="POST",
    path="/v1/messages",
    generation=True,
    status=200,
    started=0.0,
    seconds=0.1,
    usage=Usage(input=1000),
)
NOT_A_TURN = ProxiedCall(
    method="GET", path="/v1/models", generation=False, status=200, started=0.0, seconds=0.1
)


def test_phases_are_told_at_once_and_counts_at_most_once_an_interval() -> None:
    told: list[TrialPhase] = []
    # An interval no test outlives: the calls are told with the next phase.
    reporter = PhaseReporter(told.append, lambda call: 0.25, interval=3600)
    with reporting(reporter):
        phase("setup")
        phase("agent")
        observer = context_observer()
        assert observer is not None  # a proxy started here would tell the reporter
        for _ in range(5):
            observer(CALL)
        observer(NOT_A_TURN)
        phase("grading")
        phase("grading")
        phase("recording")
    phase("agent")  # after the trial: nobody listens
    assert told == [
        TrialPhase("setup"),
        TrialPhase("agent"),
        TrialPhase("grading", calls=5, usd=1.25),
        TrialPhase("recording", calls=5, usd=1.25),
    ]
    assert context_observer() is None


def test_the_latest_counts_follow_once_the_interval_is_over() -> None:
    told: list[TrialPhase] = []
    seen = threading.Event()

    def listener(state: TrialPhase) -> None:
        told.append(state)
        if state.calls == 2:
            seen.set()

    reporter = PhaseReporter(listener, interval=0.05)
    reporter.enter("agent")
    reporter.call(CALL)
    reporter.call(CALL)
    assert seen.wait(60), told  # no further event comes: the timer tells them
    reporter.close()
    # However slow the machine, the last thing told is the latest count.
    assert told[0] == TrialPhase("agent") and told[-1] == TrialPhase("agent", calls=2)


def test_without_an_interval_every_call_is_told_and_a_failing_listener_is_ignored() -> None:
    told: list[TrialPhase] = []

    def listener(state: TrialPhase) -> None:
        told.append(state)
        raise RuntimeError("the driver went away")

    reporter = PhaseReporter(listener, interval=0)
    reporter.enter("agent")
    reporter.call(CALL)
    reporter.call(CALL)
    reporter.close()
    reporter.call(CALL)
    assert [each.calls for each in told] == [0, 1, 2]


def test_the_summary_counts_phases_with_the_range_of_turns_and_the_spend() -> None:
    phases = [
        *(TrialPhase("agent", calls=n, usd=0.01) for n in (4, 19, 7)),
        TrialPhase("agent"),
        TrialPhase("grading", calls=3),
        TrialPhase("setup"),
        TrialPhase("setup"),
        TrialPhase("starting"),
    ]
    assert summarize(phases) == (
        "8 running: 4 agent (turn 4..19), 1 grading, 2 setup, 1 starting; $0.0300 spent so far"
    )
    assert summarize([TrialPhase("agent", calls=2)]) == "1 running: 1 agent (turn 2)"
    assert TrialPhase("agent", calls=2, usd=0.2).describe() == "agent, turn 2, $0.2000"


def test_the_board_writes_what_runs_and_forgets_finished_trials(tmp_path: Path) -> None:
    file = tmp_path / "live.json"
    file.write_text("left by a killed run")
    board = LiveBoard("run-1", file, interval=0)
    assert not file.exists()
    first = board.start("s/t0/v/r1")
    second = board.start("s/t1/v/r1")
    first(TrialPhase("agent", calls=3, usd=0.5))
    shown = board.changed()
    assert shown == RunningTrials(
        (("s/t0/v/r1", TrialPhase("agent", 3, 0.5)), ("s/t1/v/r1", TrialPhase("starting")))
    )
    assert board.changed() is None  # nothing new
    written = json.loads(file.read_text())
    assert written["trials"]["s/t0/v/r1"] == {"phase": "agent", "calls": 3, "usd": 0.5}
    board.finish("s/t0/v/r1")
    first(TrialPhase("recording", calls=3, usd=0.5))  # late: the trial is recorded already
    second(TrialPhase("setup"))
    again = board.changed()
    assert again is not None
    assert again.trials == (("s/t1/v/r1", TrialPhase("setup")),)
    board.close()
    assert not file.exists()


def test_a_log_gets_the_summary_when_it_changes_and_not_more_often() -> None:
    out = io.StringIO()
    progress = PlainProgress(out, summary_seconds=3600)
    progress.trials_running(RunningTrials((("a", TrialPhase("agent", calls=1)),)))
    progress.trials_running(RunningTrials((("a", TrialPhase("agent", calls=2)),)))
    progress.trials_running(RunningTrials(()))
    assert out.getvalue().splitlines() == ["1 running: 1 agent (turn 1)"]


def test_the_terminal_shows_the_summary_above_each_trial_with_its_phase() -> None:
    out = io.StringIO()
    progress = LiveProgress(Console(file=out, force_terminal=True, width=100, color_system=None))
    for number in range(2):
        planned = SimpleNamespace(
            trial_id=f"s/t{number}/v/r1",
            variant=SimpleNamespace(label="v"),
            task=SimpleNamespace(id=f"t{number}"),
            repetition=1,
        )
        progress.trial_started(cast(Any, planned), number + 1, 2)
    progress.trials_running(
        RunningTrials(
            (("s/t0/v/r1", TrialPhase("agent", 4, 0.01)), ("s/t1/v/r1", TrialPhase("grading")))
        )
    )
    progress.close()
    shown = out.getvalue()
    assert "2 running: 1 agent (turn 4), 1 grading; $0.0100 spent so far" in shown
    assert "[1/2] v on t0 (r1): agent, turn 4, $0.0100" in shown
    assert "[2/2] v on t1 (r1): grading" in shown
    # The summary leads the frame that shows the phases.
    assert shown.index("2 running:") < shown.index("[1/2] v on t0 (r1): agent")
