"""What a running trial is doing reaches the driver's progress and ``harnessdrive watch``.

A trial of a command agent that calls the scripted model server is held at each phase (its
task's setup, its agent after two model calls, its grading each wait for a file) until the
progress, and ``watch`` from another process, have shown that phase: every step waits for an
event, none for a time.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harnessdrive.cli.variants import resolve_variants
from harnessdrive.protocols.phases import TrialPhase
from harnessdrive.running.live_board import RunningTrials
from harnessdrive.running.plan import PlannedTrial, make_plan
from harnessdrive.running.progress import SilentProgress
from harnessdrive.running.run import RunDriver, RunOptions, RunSummary
from harnessdrive.store.paths import ResultsPaths
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.model_server import ModelServer, Script, SideReply, Turn
from harnessdrive.testing.model_server import Usage as ScriptUsage
from harnessdrive.testing.suites import TaskFiles, write_suite
from tests.integration.spending import write_prices
from tests.waiting import trials_under_way, wait_until

GATE = """
import os, sys, time
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
if sys.argv[2:] == ["check"]:
    found = {}
    exec(open("calc.py").read(), found)
    assert found["add"](1, 2) == 3
"""

AGENT = """
import json, os, sys, time, urllib.request
body = json.dumps({"model": "mock-small", "max_tokens": 9,
                   "messages": [{"role": "user", "content": "fix it"}]}).encode()
for _ in range(2):
    request = urllib.request.Request(
        os.environ["HARNESSDRIVE_MODEL_URL"] + "/v1/messages", data=body,
        headers={"content-type": "application/json", "x-api-key": "k"})
    urllib.request.urlopen(request, timeout=30).read()
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
open("calc.py", "w").write("def add(a, b):\\n    return a + b\\n")
"""


@dataclass
class Gates:
    """The files that let the trial's setup, agent and grading go on."""

    folder: Path
    setup: Path = field(init=False)
    agent: Path = field(init=False)
    grading: Path = field(init=False)

    def __post_init__(self) -> None:
        self.setup = self.folder / "setup-go"
        self.agent = self.folder / "agent-go"
        self.grading = self.folder / "grading-go"


class Watching(SilentProgress):
    """Keeps what the driver tells of its running trials."""

    def __init__(self) -> None:
        self.shown: list[RunningTrials] = []

    def trial_started(self, trial: PlannedTrial, number: int, total: int) -> None:
        return None

    def trials_running(self, running: RunningTrials) -> None:
        self.shown.append(running)

    def saw(self, wanted: Callable[[TrialPhase], bool]) -> bool:
        return any(wanted(phase) for running in self.shown for _, phase in running.trials)


def gated_suite(folder: Path, scripts: Path, server: ModelServer) -> tuple[Path, Gates]:
    """A one-trial suite whose setup, agent and grading each wait for their gate (the gates
    and scripts in ``scripts``)."""
    gates = Gates(scripts)
    gate, agent = scripts / "gate.py", scripts / "agent.py"
    gate.write_text(GATE)
    agent.write_text(AGENT)
    task = TaskFiles(
        "t0",
        files={"calc.py": "def add(a, b):\n    return a - b\n"},
        solution={"calc.py": "def add(a, b):\n    return a + b\n"},
        setup=(f"{sys.executable} {gate} {gates.setup}",),
        command=f"{sys.executable} {gate} {gates.grading} check",
        agent_timeout=120,
        grade_timeout=120,
    )
    variant = {
        "harness": "command",
        "name": "cli",
        "model": "mock-small",
        "options": {"template": f"{{python}} {agent} {gates.agent}", "model_url": server.base_url},
    }
    return write_suite(folder, [task], variants=[variant]), gates


def model_server() -> ModelServer:
    # The agent offers no tools: each of its calls gets the side reply, $0.10 of mock-small.
    return ModelServer(
        Script(turns=(Turn(text="ok"),), side_reply=SideReply(usage=ScriptUsage(input=100_000)))
    )


def start_run(
    suite: Path, results: Path, prices: Path, progress: Watching, **extra: Any
) -> tuple[threading.Thread, list[RunSummary]]:
    loaded = load_suite(suite)
    plan = make_plan(loaded, resolve_variants(loaded, []), 1)
    options = RunOptions(
        results=results, sandbox="none", price_files=(prices,), max_usd=10, **extra
    )
    summaries: list[RunSummary] = []
    runner = threading.Thread(
        target=lambda: summaries.append(RunDriver(plan, options, progress).run())
    )
    runner.start()
    return runner, summaries


def run_gated(tmp_path: Path, *, watch: bool, **extra: Any) -> GatedRun:
    """Run the gated trial, letting each phase go on once the progress (and ``watch``, when
    asked) showed it."""
    progress = Watching()
    results = tmp_path / "results"
    watched: list[str] = []
    watcher: subprocess.Popen[str] | None = None
    reader: threading.Thread | None = None
    # Not under pytest's temp folder: a grading command naming a ".../pytest-N/" path is
    # taken for a pytest run.
    scripts = Path(tempfile.mkdtemp(prefix="hd-gates-"))
    with model_server() as server, contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, scripts, ignore_errors=True)
        suite, gates = gated_suite(tmp_path, scripts, server)
        runner, summaries = start_run(suite, results, write_prices(tmp_path), progress, **extra)
        try:
            alive = lambda: runner.is_alive() or summaries  # noqa: E731
            wait_until(lambda: alive() and trials_under_way(results), "the trial under way")
            if watch:
                command = [sys.executable, "-m", "harnessdrive", "watch", str(results)]
                watcher = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
                out = watcher.stdout
                reader = threading.Thread(target=lambda: watched.extend(out or ()))
                reader.start()

            def seen(kind: str, text: str = "") -> bool:
                return not watch or any(
                    line.split()[0] == kind and text in line for line in watched
                )

            wait_until(
                lambda: progress.saw(lambda p: p.phase == "setup") and seen("setup"),
                "the setup shown",
            )
            gates.setup.touch()
            # Two calls of $0.10 each: the agent's turns and spend so far.
            wait_until(
                lambda: (
                    progress.saw(lambda p: p == TrialPhase("agent", 2, 0.2))
                    and seen("running", "1 running: 1 agent (turn 2); $0.2000 spent so far")
                ),
                "the agent's two turns shown",
            )
            gates.agent.touch()
            wait_until(
                lambda: progress.saw(lambda p: p.phase == "grading") and seen("grading"),
                "the grading shown",
            )
            gates.grading.touch()
        finally:
            for gate in (gates.setup, gates.agent, gates.grading):
                gate.touch()
            runner.join(timeout=300)
            if watcher is not None and reader is not None:
                watcher.wait(timeout=300)
                reader.join(timeout=60)
    (summary,) = summaries
    return GatedRun(summary, progress, watched, None if watcher is None else watcher.returncode)


@dataclass(frozen=True)
class GatedRun:
    summary: RunSummary
    progress: Watching
    watched: list[str]
    """``watch``'s lines."""
    watch_code: int | None


def test_the_progress_and_watch_show_each_phase_with_turns_and_spend(tmp_path: Path) -> None:
    gated = run_gated(tmp_path, watch=True)
    (result,) = gated.summary.trials
    assert (result.status, result.outcome) == ("completed", "pass")
    assert gated.watch_code == 0
    # Each phase was shown once, in order, and nothing of them is left once the run is over.
    order = [line.split()[0] for line in gated.watched if line.split()[0] != "running"]
    assert order == ["started", "setup", "agent", "grading", "finished"] or order == [
        "started",
        "setup",
        "agent",
        "grading",
        "recording",
        "finished",
    ], gated.watched
    assert any("/t0/cli/r1" in line for line in gated.watched if line.startswith("agent"))
    assert not ResultsPaths(gated.summary.results).live.exists()
