"""Scripted agents for improvement tasks, loaded by dotted path as a harness name.

``harnessdrive.testing.improvers:SlowImprover`` applies the task's next reference overlay
(like the built-in ``reference``) after working ``seconds`` in its sandbox, and appends the
round it was asked to work on to the file ``log`` names (one line per run), so a test can tell
which rounds ran again after a kill::

    [[variants]]
    harness = "harnessdrive.testing.improvers:SlowImprover"
    name = "slow"
    options = { seconds = 1.5, log = "/some/where/rounds.log" }

``MeasuringImprover`` asks the in-loop evaluator in one of the patterns agents use;
``NoisyImprover`` makes gains too small to tell from a noisy objective's jitter;
``EvaluatorAbuser`` tries to cheat the in-loop evaluator; ``ResumingImprover`` can resume its
session and logs, run by run, whether it was asked to and found that session's state.
"""

from __future__ import annotations

import json
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from harnessdrive.harnesses.base import AgentRequest, AgentRun, HarnessInfo
from harnessdrive.harnesses.options import HarnessOptions, parse_options
from harnessdrive.harnesses.scripted import run_as_agent
from harnessdrive.protocols.improve.evaluator import call_evaluator
from harnessdrive.sandbox.clock import now
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.tasks.overlays import apply_next_overlay
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


def _round_of(prompt: str) -> int | None:
    """The round the prompt asks for, or None outside an improvement loop."""
    found = _ROUND.search(prompt)
    return int(found.group(1)) if found else None


def _improved(started: float, touched: list[str], *, session_id: str | None = None) -> AgentRun:
    """A finished run whose transcript names the files it changed."""
    events = tuple(Event(kind="file_change", text=path) for path in touched)
    return AgentRun(
        exit_code=0,
        timed_out=False,
        seconds=now() - started,
        transcript=Transcript(session_id=session_id, events=events),
        version="scripted",
    )


class SlowImproverOptions(HarnessOptions):
    seconds: float = 0.0
    log: str | None = None
    fail_once_in_round: int | None = None
    """In this round, the first time only, the run fails as the machinery would (an unexpected
    error): the trial is recorded as could not run, and the same command resumes it."""
    once: str | None = None
    """The file that marks the failure as done (``fail_once_in_round`` needs it)."""


class SlowImprover(_ScriptedAgent):
    """Works a while, then applies the task's next reference overlay."""

    name = "slow-improver"
    options_model = SlowImproverOptions

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        options = parse_options(SlowImproverOptions, request.variant, self.name)
        request.logs.mkdir(parents=True, exist_ok=True)
        number = _round_of(request.prompt)
        if options.log is not None:
            with Path(options.log).open("a", encoding="utf-8") as handle:
                handle.write(f"{number if number is not None else '?'}\n")
        if number is not None and number == options.fail_once_in_round and options.once:
            marker = Path(options.once)
            if not marker.exists():
                marker.write_text("failed once\n", encoding="utf-8")
                raise RuntimeError("a transient failure of the machinery")
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
        return _improved(started, touched)


_FAKE_JSON = "def dumps(*args, **kwargs):\n    return '{\"value\": 1}'\n"


class EvaluatorAbuserOptions(HarnessOptions):
    calls: int = 4


class EvaluatorAbuser(_ScriptedAgent):
    """Applies the next overlay, then tries to cheat the evaluator: calls it ``calls`` times
    (past any budget), looks for the objective's files wherever it can reach, and plants a fake
    objective where the measuring copy would read it, with a ``json`` module beside it that
    fakes the value it prints. It writes what it saw to ``abuser.json`` in its logs."""

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
            # and, beside it, a json module that Python would import before the standard one
            shadow = fake.with_name("json.py")
            shadow.write_text(_FAKE_JSON)
            touched += [item.target, shadow.relative_to(request.workspace).as_posix()]
        answers = [call_evaluator(request.home) for _ in range(options.calls)]
        (request.logs / "abuser.json").write_text(
            json.dumps({"found": found, "answers": answers}), encoding="utf-8"
        )
        request.stdout.write_text("measured\n")
        return _improved(started, touched)


class MeasuringImproverOptions(HarnessOptions):
    pattern: Literal["none", "before", "twice", "keep", "concurrent"] = "before"
    """When it asks the evaluator: ``before`` (then improves), ``twice`` (improves, then asks
    twice), ``keep`` (improves, asks, keeps working on notes of its own, asks again),
    ``concurrent`` (improves, then asks twice at once), ``none``."""
    tamper_in_round: int | None = None
    """In this round it also plants a module that shadows the standard ``json``."""
    break_in_round: int | None = None
    """In this round its change also breaks the code (every file it touched raises at import),
    so the gate fails and the round is reverted; later rounds recover."""


class MeasuringImprover(_ScriptedAgent):
    """Applies the task's next reference overlay and asks the evaluator in the ``pattern`` its
    options name; the answers go to ``answers.json`` in its logs. Its curve must be the one of
    an improver that never asks."""

    name = "measuring-improver"
    options_model = MeasuringImproverOptions

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        options = parse_options(MeasuringImproverOptions, request.variant, self.name)
        request.logs.mkdir(parents=True, exist_ok=True)
        answers: list[str] = []
        number = _round_of(request.prompt)
        if options.pattern == "before":
            answers.append(call_evaluator(request.home))
        touched = apply_next_overlay(request.task, request.workspace)
        if options.pattern == "twice":
            answers += [call_evaluator(request.home) for _ in range(2)]
        if options.pattern == "keep":
            answers.append(call_evaluator(request.home))
            # More work: a state the evaluator has not seen, which the round's grading measures.
            notes = request.workspace / "NOTES.md"
            with notes.open("a", encoding="utf-8") as handle:
                handle.write(f"measured: {answers[-1]}\n")
            touched.append(notes.name)
            answers.append(call_evaluator(request.home))
        if options.pattern == "concurrent":
            with ThreadPoolExecutor(max_workers=2) as pool:
                answers += list(pool.map(lambda _: call_evaluator(request.home), range(2)))
        if number is not None and number == options.break_in_round:
            for path in touched:
                with (request.workspace / path).open("a", encoding="utf-8") as handle:
                    handle.write('\nraise RuntimeError("broken on purpose")\n')
        if number is not None and number == options.tamper_in_round:
            (request.workspace / "json.py").write_text(_FAKE_JSON)
            touched.append("json.py")
        (request.logs / "answers.json").write_text(json.dumps(answers), encoding="utf-8")
        request.stdout.write_text("improved\n")
        return _improved(started, touched)


class NoisyImproverOptions(HarnessOptions):
    path: str
    """The file, relative to the workspace, whose numbers it nudges."""
    step: float = Field(default=0.02, gt=0, lt=1)
    """The relative nudge per round: 0.02 moves every number 2% the better way."""

    @field_validator("path")
    @classmethod
    def _inside(cls, value: str) -> str:
        if value.startswith("/") or ".." in Path(value).parts:
            raise ValueError(f"must be a path inside the workspace: {value!r}")
        return value


_LITERAL = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")


class NoisyImprover(_ScriptedAgent):
    """Moves every number in the file ``path`` names by ``step`` (2%) the way the objective
    calls better: a real but small gain, which a noisy objective's jitter hides."""

    name = "noisy-improver"
    options_model = NoisyImproverOptions

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        options = parse_options(NoisyImproverOptions, request.variant, self.name)
        request.logs.mkdir(parents=True, exist_ok=True)
        spec = request.task.spec.improve
        lower = spec is None or spec.objective.direction == "minimize"
        factor = 1 - options.step if lower else 1 + options.step
        target = request.workspace / options.path
        text = target.read_text(encoding="utf-8")
        target.write_text(
            _LITERAL.sub(lambda found: f"{float(found.group()) * factor:g}", text), encoding="utf-8"
        )
        request.stdout.write_text(f"nudged {options.path} by {options.step:g}\n")
        return _improved(started, [options.path])


class ResumingImproverOptions(HarnessOptions):
    log: str
    """A file it appends one JSON line to per run: round, session, resumed, found."""


class ResumingImprover(_ScriptedAgent):
    """Applies the next overlay, in a session of its own kept under its HOME; it declares
    ``resume_args``, so ``session = "resume"`` hands it the previous round's session."""

    name = "resuming-improver"
    options_model = ResumingImproverOptions

    def resume_args(self, session_id: str) -> list[str]:
        return ["--resume", session_id]

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        options = parse_options(ResumingImproverOptions, request.variant, self.name)
        request.logs.mkdir(parents=True, exist_ok=True)
        sessions = request.home / ".resuming-improver"
        session = request.resume_session or str(uuid.uuid4())
        # A session resumed for real has its state where the earlier run left it.
        found = (sessions / session).is_file()
        sessions.mkdir(parents=True, exist_ok=True)
        with (sessions / session).open("a", encoding="utf-8") as state:
            state.write("turn\n")
        line = {
            "round": _round_of(request.prompt),
            "session": session,
            "resumed": request.resume_session,
            "found": found,
        }
        with Path(options.log).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")
        touched = apply_next_overlay(request.task, request.workspace)
        request.stdout.write_text("improved\n")
        return _improved(started, touched, session_id=session)
