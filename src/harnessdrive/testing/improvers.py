"""Scripted agents for improvement tasks, loaded by dotted path as a harness name.

``harnessdrive.testing.improvers:SlowImprover`` applies the task's next reference overlay
(like the built-in ``reference``) after working ``seconds`` in its sandbox, and appends the
round it was asked to work on to the file ``log`` names (one line per run), so a test can tell
which rounds ran again after a kill::

    [[variants]]
    harness = "harnessdrive.testing.improvers:SlowImprover"
    name = "slow"
    options = { seconds = 1.5, log = "/some/where/rounds.log" }
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from harnessdrive.harnesses.base import AgentRequest, AgentRun, HarnessInfo
from harnessdrive.harnesses.options import HarnessOptions, parse_options
from harnessdrive.harnesses.scripted import run_as_agent
from harnessdrive.improvement.evaluator import call_evaluator
from harnessdrive.improvement.overlays import apply_next_overlay
from harnessdrive.sandbox.clock import now
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Event, Transcript

_ROUND = re.compile(r"^## Round (\d+) of \d+$", re.MULTILINE)


class _ScriptedAgent:
    """What each scripted agent here shares: its info, and its options checked before a run."""

    name: str
    options_model: type[HarnessOptions]

    def info(self) -> HarnessInfo:
        detail = self.__doc__ or ""
        return HarnessInfo(name=self.name, installed=True, version="scripted", detail=detail)

    def check_variant(self, variant: VariantSpec) -> None:
        parse_options(self.options_model, variant, self.name)


class SlowImproverOptions(HarnessOptions):
    seconds: float = 0.0
    log: str | None = None


class SlowImprover(_ScriptedAgent):
    """Works a while, then applies the task's next reference overlay."""

    name = "slow-improver"
    options_model = SlowImproverOptions

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        options = parse_options(SlowImproverOptions, request.variant, self.name)
        request.logs.mkdir(parents=True, exist_ok=True)
        if options.log is not None:
            found = _ROUND.search(request.prompt)
            with Path(options.log).open("a", encoding="utf-8") as handle:
                handle.write(f"{found.group(1) if found else '?'}\n")
        if options.seconds > 0:
            waited = run_as_agent(request, ["sleep", f"{options.seconds:g}"])
            if waited.timed_out or waited.stopped:
                return AgentRun(
                    exit_code=None,
                    timed_out=waited.timed_out,
                    stopped=waited.stopped,
                    seconds=now() - started,
                    version="scripted",
                )
        touched = apply_next_overlay(request.task, request.workspace)
        request.stdout.write_text("improved\n")
        return AgentRun(
            exit_code=0,
            timed_out=False,
            seconds=now() - started,
            transcript=Transcript(events=tuple(Event(kind="file_change", text=p) for p in touched)),
            version="scripted",
        )


class EvaluatorAbuserOptions(HarnessOptions):
    calls: int = 4


class EvaluatorAbuser(_ScriptedAgent):
    """Applies the next overlay, then tries to cheat the evaluator: calls it ``calls`` times
    (past any budget), looks for the objective's files wherever it can reach, and plants a fake
    objective where the measuring copy would read it. It writes what it saw to ``abuser.json``
    in its logs."""

    name = "evaluator-abuser"
    options_model = EvaluatorAbuserOptions

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        options = parse_options(EvaluatorAbuserOptions, request.variant, self.name)
        request.logs.mkdir(parents=True, exist_ok=True)
        touched = apply_next_overlay(request.task, request.workspace)
        spec = request.task.spec.improve
        objective = spec.objective.inject if spec is not None else ()
        names = {Path(item.source).name for item in objective}
        names |= {Path(item.target).name for item in objective}
        found = [
            str(path)
            for root in (request.workspace, request.home, request.tmp)
            for path in root.rglob("*")
            if path.name in names
        ]
        for item in objective:  # what the evaluator would run, rewritten to print 1
            fake = request.workspace / item.target
            fake.parent.mkdir(parents=True, exist_ok=True)
            fake.write_text("print(1)\n")
            touched.append(item.target)
        answers = [call_evaluator(request.home) for _ in range(options.calls)]
        (request.logs / "abuser.json").write_text(
            json.dumps({"found": found, "answers": answers}), encoding="utf-8"
        )
        request.stdout.write_text("measured\n")
        return AgentRun(
            exit_code=0,
            timed_out=False,
            seconds=now() - started,
            transcript=Transcript(events=tuple(Event(kind="file_change", text=p) for p in touched)),
            version="scripted",
        )
