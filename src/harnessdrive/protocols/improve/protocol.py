"""The improvement protocol: rounds of work on a measured objective, the best state kept.

Baseline: the untouched repository is graded like any round (the gate, i.e. the task's tests
with the hidden files, must pass; the objective must be ≥ 0, and not already 0 when
minimising), or the task is broken and the trial an infrastructure failure. Each round the agent
gets the task's prompt plus the round section (history.py); its change is graded in a
fresh grading copy and measured in a copy of its own (the ``improve`` grader kind). A gated round
that beats the best beyond the noise becomes the best checkpoint; with ``keep_best`` every round
starts from a fresh copy of the base state with the best checkpoint's change written in, so
nothing of a reverted round survives, ignored files included. With several samples the best is
measured again before the verdict; the trial passes when that final state passes the gate and
beats the baseline by more than ``min_improvement`` beyond the noise (acceptance.py),
and a known-bad state measured right after it comes out worse (objective_witness.py;
its logs in ``rounds/<R+3>/evaluations/1/``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import median
from typing import Any

from harnessdrive.errors import HarnessdriveError, TaskFormatError
from harnessdrive.grading.kinds.base import MeasuringKind, grader_kind
from harnessdrive.grading.verdict import Finding, Verdict
from harnessdrive.protocols.base import ProtocolInputs, ProtocolOutcome, RoundOutcome
from harnessdrive.protocols.improve.acceptance import improvement
from harnessdrive.protocols.improve.checkpoint_state import unusable
from harnessdrive.protocols.improve.evaluator import (
    Answer,
    Evaluator,
    EvaluatorCall,
    RoundClosing,
    client_command,
)
from harnessdrive.protocols.improve.history import RoundEntry, RoundState, round_section
from harnessdrive.protocols.improve.metrics import trial_score
from harnessdrive.protocols.improve.objective_witness import WitnessReading, read_witness
from harnessdrive.protocols.improve.resume import (
    entry_from,
    outcome_from,
    outcome_json,
    restore_files,
    state_files,
)
from harnessdrive.protocols.improve.sessions import session_after
from harnessdrive.protocols.round import run_round
from harnessdrive.protocols.stages import StageFailed, stage
from harnessdrive.store.checkpoint import restore_files as restore_kept
from harnessdrive.store.results import Status
from harnessdrive.tasks.improve_models import ImproveSpec
from harnessdrive.workspace.changes import Changes, capture_changes
from harnessdrive.workspace.materialize import apply_changes

NAME = "improve"
RECORD_FILE = "improve.json"
BASELINE_ROUND = 0
"""The baseline's grading logs go to ``rounds/0/``; a re-measurement's to ``rounds/<R+1>/``."""


@dataclass(frozen=True)
class _State:
    """A measured state: its change against the base, its gate and every sample."""

    changes: Changes
    gate: str
    samples: tuple[float, ...]

    @property
    def value(self) -> float | None:
        return median(self.samples) if self.samples else None


class ImproveProtocol:
    """Several rounds on the task's ``[improve]`` objective; see the module's docstring."""

    name = NAME

    def run(self, inputs: ProtocolInputs) -> ProtocolOutcome:
        spec = inputs.task.spec.improve
        kind = grader_kind(inputs.task.spec.grade.kind)
        if spec is None or not isinstance(kind, MeasuringKind):
            raise StageFailed(
                "protocol improve",
                TaskFormatError(
                    f"task {inputs.task.id}: the improve protocol needs an [improve] table and "
                    f"a [grade] kind that measures its objective (kind 'improve', say)"
                ),
            )
        overrides = inputs.variant.improve
        return _Run(inputs, overrides.applied(spec) if overrides else spec, kind).run()


class _Run:
    def __init__(self, inputs: ProtocolInputs, spec: ImproveSpec, kind: MeasuringKind) -> None:
        self.inputs = inputs
        self.spec = spec
        self.kind = kind
        """The task's grader kind, which reads the objective's samples out of its verdicts."""
        self.direction = spec.objective.direction
        self.measured: dict[str, Verdict] = {}
        """Verdicts by tree: a deterministic objective (one sample) is never measured twice."""
        self.evaluator: Evaluator | None = None
        self.unusable: str | None = None
        """Why the killed attempt's checkpoint was not resumed from, when it was not."""
        self.carried_seconds = 0.0
        """The killed attempt's seconds, when its rounds are resumed."""
        self.evaluator_withheld: str | None = None
        """Why the task's evaluator was not offered, when it was not."""
        self.baseline_result: float | None = None
        """The objective runner's digest of the untouched repository's result, if it gave one:
        a state whose workload answers otherwise did not do the same work, and has no value."""

    def measure_workspace(self, workspace: Path, number: int, call: int) -> Answer:
        """The evaluator's measurement of the agent's workspace as it is now: the objective
        alone, in a copy of its own (never the gate, never the hidden tests)."""
        inputs = self.inputs
        max_file_bytes = inputs.task.spec.limits.diff_file_mb * 1024 * 1024
        try:
            changes = capture_changes(inputs.snapshot, workspace, max_file_bytes=max_file_bytes)
        except HarnessdriveError as exc:
            return Answer(None, f"the workspace cannot be read as a change: {exc}")
        if inputs.measure is None:
            return Answer(None, "this trial cannot measure in the loop", machinery=True)
        measured = inputs.measure(changes, number, call)
        if not measured.ok:
            return Answer(None, measured.error or "no value", measured.machinery)
        if measured.result != self.baseline_result:
            return Answer(None, _DIFFERENT_RESULT)
        return Answer(median(measured.samples))

    def evaluate(self, changes: Changes, number: int, *, again: bool = False) -> Verdict:
        cached = self.measured.get(changes.tree)
        if cached is not None and self.spec.objective.repeats == 1 and not again:
            return cached
        verdict = self.inputs.grade(changes, number)
        different = self.kind.workload_result(verdict) != self.baseline_result
        if number != BASELINE_ROUND and self.kind.samples(verdict) and different:
            verdict = self.kind.without_measurement(verdict, _DIFFERENT_RESULT)
        self.measured.setdefault(changes.tree, verdict)
        return verdict

    def run(self) -> ProtocolOutcome:
        evaluator = self.spec.evaluator
        if evaluator.budget == 0:
            return self._run()
        if self.inputs.request.network == "none":
            # The agent could not reach it: it is neither started nor offered in the prompt.
            self.evaluator_withheld = "the agent runs without a network (--network none)"
            return self._run()
        self.evaluator = Evaluator(
            evaluator.budget, evaluator.max_evaluations, self.measure_workspace
        )
        try:
            return self._run()
        finally:
            self.evaluator.close()

    def _run(self) -> ProtocolOutcome:
        inputs, spec = self.inputs, self.spec
        snapshot = inputs.snapshot
        untouched = Changes(base_tree=snapshot.tree, tree=snapshot.tree, files=(), patch=b"")
        rounds: list[RoundOutcome] = []
        history: list[RoundEntry] = []
        prepared: Path | None = None
        session: str | None = None
        """The agent session the next round continues (``session = "resume"``)."""
        if inputs.resumed is not None:
            # A checkpoint that does not read back whole is not trusted in part: start over.
            self.unusable = unusable(inputs.resumed.state, spec.keep_best)
        if inputs.resumed is not None and self.unusable is None:
            with stage("improvement resume"):
                baseline, best, last, prepared = self._resume(untouched, rounds, history)
        else:
            with stage("improvement baseline"):
                baseline = self._baseline(untouched)
            best = last = baseline
        workspace = inputs.request.workspace

        def own_folder(number: int, name: str) -> Path:
            # Each round is a fresh session: a HOME and tmp of its own (a CLI's session logs).
            folder = inputs.round_scratch(number) / name
            folder.mkdir(parents=True, exist_ok=True)
            return folder

        for number in range(len(history) + 1, spec.rounds + 1):
            if inputs.stop.stopped:
                break
            if prepared is not None:
                workspace, prepared = prepared, None
            elif number > 1 and spec.keep_best:
                workspace = inputs.new_workspace(number)
                with stage("checkpoint restore"):
                    apply_changes(snapshot, workspace, best.changes.files)
            # A resumed session lives in the HOME its first round ran under.
            own_home = number > 1 and spec.session == "fresh"
            home = own_folder(number, "home") if own_home else inputs.request.home
            python = inputs.request.python
            evaluate = client_command(home, python) if self.evaluator is not None else None
            prompt = inputs.task.prompt + round_section(
                spec, number, _value(baseline), _value(best), history, evaluate
            )
            request = inputs.round_request(number, prompt=prompt, workspace=workspace)
            if number > 1:
                request = replace(request, home=home, tmp=own_folder(number, "tmp"))
            request = replace(request, resume_session=session)
            if self.evaluator is not None:
                self.evaluator.open_round(number, workspace, home)
                services = {**request.services, **self.evaluator.env(home, python)}
                request = replace(request, services=services)
            outcome = run_round(
                RoundClosing(inputs.harness, self.evaluator) if self.evaluator else inputs.harness,
                request,
                snapshot,
                lambda changes, n=number: self.evaluate(changes, n),  # type: ignore[misc]
                diff_path=inputs.round_paths(number).diff,
                stop=inputs.stop,
            )
            if self.evaluator is not None:
                self.evaluator.close_round()
            # Resumed only where the run reports the session it was handed.
            resumed = session if outcome.agent.transcript.session_id == session else None
            session = session_after(spec, inputs.harness, outcome)
            state = _State(
                outcome.changes, outcome.verdict.outcome, self.kind.samples(outcome.verdict)
            )
            kind, note = self._judge(outcome, state, best)
            if kind == "kept":
                best = state
            if kind == "kept" or not spec.keep_best:
                last = state  # without keep_best the agent's state carries over, whatever it is
            entry = RoundEntry(
                number=number,
                status=outcome.status,
                state=kind,
                value=state.value,
                samples=state.samples,
                gate=state.gate,
                best=_value(best),
                evaluator_calls=self._calls_in(number),
                note=note,
                resumed=resumed,
            )
            history.append(entry)
            rounds.append(replace(outcome, verdict=_with_round(outcome.verdict, entry), note=note))
            if kind == "interrupted":
                break
            with stage("round checkpoint"):
                self._checkpoint(baseline, best, last, rounds, history)
        final = best if spec.keep_best else last
        return self._outcome(baseline, best, final, rounds, history)

    def _calls_in(self, number: int) -> int:
        return self.evaluator.in_round(number) if self.evaluator is not None else 0

    def _evaluator_record(self) -> list[dict[str, Any]]:
        return [call.as_json() for call in self.evaluator.calls] if self.evaluator else []

    def _checkpoint(
        self,
        baseline: _State,
        best: _State,
        last: _State,
        rounds: list[RoundOutcome],
        history: list[RoundEntry],
    ) -> None:
        """Hand the trial core what resuming after this round needs (resume.py)."""
        snapshot = self.inputs.snapshot

        def saved(state: _State) -> dict[str, Any]:
            files = state_files(snapshot, state.changes) if state.changes.files else []
            return {"gate": state.gate, "samples": list(state.samples), "files": files}

        cached = self.measured.get(snapshot.tree)
        state = {
            "baseline": list(baseline.samples),
            "baseline_verdict": cached.model_dump(mode="json") if cached else None,
            "rounds": [outcome_json(each) for each in rounds],
            "history": [entry.as_json() for entry in history],
            "best": saved(best),
            "last": saved(last) if not self.spec.keep_best else None,
            "evaluator": self._evaluator_record(),
        }
        self.inputs.checkpoint(len(history), state)

    def _resume(
        self, untouched: Changes, rounds: list[RoundOutcome], history: list[RoundEntry]
    ) -> tuple[_State, _State, _State, Path]:
        """The rounds a killed attempt recorded; the next round's workspace, from its start."""
        inputs = self.inputs
        assert inputs.resumed is not None
        state = inputs.resumed.state
        rounds.extend(outcome_from(each) for each in state["rounds"])
        if inputs.resumed.files is not None:  # the recorded rounds' prompts, diffs and logs
            restore_kept(inputs.resumed.files, inputs.round_paths(1).root)
        self.carried_seconds = inputs.resumed.elapsed
        if self.evaluator is not None:
            self.evaluator.calls.extend(
                EvaluatorCall.from_json(c) for c in state.get("evaluator", [])
            )
        history.extend(entry_from(each) for each in state["history"])
        if state.get("baseline_verdict"):
            verdict = Verdict.model_validate(state["baseline_verdict"])
            self.measured[untouched.tree] = verdict
            self.baseline_result = self.kind.workload_result(verdict)
        baseline = _State(untouched, "pass", tuple(state["baseline"]))
        start = state["best"] if self.spec.keep_best else state["last"]
        workspace = inputs.new_workspace(len(history) + 1)
        restore_files(workspace, start["files"])
        max_file_bytes = inputs.task.spec.limits.diff_file_mb * 1024 * 1024
        restored = capture_changes(inputs.snapshot, workspace, max_file_bytes=max_file_bytes)
        begun = _State(restored, start["gate"], tuple(start["samples"]))
        if self.spec.keep_best:
            return baseline, begun, begun, workspace
        best = state["best"]
        kept = [each for each, entry in zip(rounds, history, strict=True) if entry.state == "kept"]
        best_changes = kept[-1].changes if kept else untouched
        return (
            baseline,
            _State(best_changes, best["gate"], tuple(best["samples"])),
            begun,
            workspace,
        )

    def _baseline(self, untouched: Changes) -> _State:
        verdict = self.evaluate(untouched, BASELINE_ROUND)
        self.baseline_result = self.kind.workload_result(verdict)
        samples = self.kind.samples(verdict)
        # Named within the trial folder: the worker's own folder is gone once it is recorded.
        where = f"rounds/{BASELINE_ROUND}/ in the trial folder"
        if verdict.outcome != "pass":
            raise TaskFormatError(
                f"the untouched repository does not pass the gate ({verdict.outcome}); see {where}"
            )
        if not samples:
            raise TaskFormatError(
                f"the objective cannot be measured on the untouched repository; see {where}"
            )
        state = _State(untouched, verdict.outcome, samples)
        value = _value(state)
        if value < 0 or (self.direction == "minimize" and value == 0):
            raise TaskFormatError(
                f"the objective's baseline is {value:g}: it must be ≥ 0, and above 0 when "
                "minimising"
            )
        return state

    def _judge(self, outcome: RoundOutcome, state: _State, best: _State) -> tuple[RoundState, str]:
        if outcome.status == "interrupted":
            return "interrupted", "interrupted"
        other: RoundState = "reverted" if self.spec.keep_best else "carried"
        if outcome.verdict.outcome == "not_graded":
            return "failed", f"could not be evaluated: {outcome.verdict.error or 'not graded'}"
        if state.gate != "pass":
            return other, f"gate {state.gate}; {other}"
        if not state.samples:
            why = _objective_error(outcome.verdict) or "no value"
            return "failed", f"could not be measured: {why}; {other}"
        found = improvement(self.direction, best.samples, state.samples)
        if found.beyond(0.0):
            return "kept", f"new best ({found.relative:+.1%} on the best)"
        return other, f"not better than the best beyond the noise ({found.relative:+.1%}); {other}"

    def _outcome(
        self,
        baseline: _State,
        best: _State,
        final: _State,
        rounds: list[RoundOutcome],
        history: list[RoundEntry],
    ) -> ProtocolOutcome:
        spec = self.spec
        if not rounds:
            raise StageFailed("protocol improve", ValueError("stopped before the first round"))
        number = spec.rounds + 1
        if spec.objective.repeats > 1 and final.changes.files:
            # One lucky reading must not stick: the state the verdict is about is measured anew.
            verdict = self.evaluate(final.changes, number, again=True)
            final = _State(
                final.changes, verdict.outcome, self.kind.samples(verdict) or final.samples
            )
            if best.changes.tree == final.changes.tree:
                best = final
        if spec.objective.repeats > 1 and best.changes.tree not in (
            final.changes.tree,
            self.inputs.snapshot.tree,
        ):
            # Without keep_best the best is another state: it is reported measured anew too.
            verdict = self.evaluate(best.changes, number + 1, again=True)
            best = _State(best.changes, verdict.outcome, self.kind.samples(verdict) or best.samples)
        # Tampering wins over any outcome, as in every grading: a reverted round still tried.
        # A tampered trial improved nothing: score 0, and no gain or ratio in any view.
        tampered = any(each.verdict.outcome == "tampered" for each in rounds)
        gate_ok = final.gate == "pass" and bool(final.samples) and not tampered
        refused = sum(c.refused is not None for c in self.evaluator.calls) if self.evaluator else 0
        scored = trial_score(
            spec, baseline.samples, _value(best), final.samples, gate_ok, history, refused
        )
        witness = None
        if scored.passed:
            # A claimed improvement only: a known-bad state measured right after must lose.
            witness = read_witness(self.inputs, spec, final.samples, number + 2)
            finding = witness.finding()
            if finding is not None:
                rounds[-1] = _with_finding(rounds[-1], finding)
            if finding is not None and finding.tampers:
                tampered = True
                scored = trial_score(
                    spec, baseline.samples, _value(best), final.samples, False, history, refused
                )
        passed, metrics = scored.passed, scored.metrics
        if witness is not None and witness.value is not None:
            metrics["improve.witness"] = witness.value
        if tampered:
            metrics["improve.anytime"] = 0.0
        self._write_record(baseline, best, final, history, metrics, passed, witness)
        return ProtocolOutcome(
            rounds=tuple(rounds),
            status=_trial_status(rounds),
            outcome="tampered" if tampered else "pass" if passed else "fail",
            score=scored.score,
            metrics=metrics,
            carried_seconds=self.carried_seconds,
        )

    def _write_record(
        self,
        baseline: _State,
        best: _State,
        final: _State,
        history: list[RoundEntry],
        metrics: dict[str, float],
        passed: bool,
        witness: WitnessReading | None,
    ) -> None:
        spec = self.spec
        record = {
            "objective": spec.objective.model_dump(mode="json", exclude={"inject"}),
            # The settings in effect: the task's, with the variant's overrides applied.
            "settings": {
                "rounds": spec.rounds,
                "keep_best": spec.keep_best,
                "min_improvement": spec.min_improvement,
                "session": spec.session,
                "evaluator": {
                    "budget": spec.evaluator.budget if self.evaluator else 0,
                    "max_evaluations": spec.evaluator.max_evaluations,
                    "offered": self.evaluator is not None,
                    "withheld": self.evaluator_withheld,
                },
            },
            "baseline": {"value": baseline.value, "samples": list(baseline.samples)},
            "best": {"value": best.value, "samples": list(best.samples)},
            "final": {"value": final.value, "samples": list(final.samples), "gate": final.gate},
            "passed": passed,
            "witness": witness.as_json() if witness is not None else None,
            "rounds": [entry.as_json() for entry in history],
            "evaluator": self._evaluator_record(),
            "metrics": metrics,
        }
        if self.unusable is not None:
            record["checkpoint_unusable"] = self.unusable
        path = self.inputs.round_paths(1).root / RECORD_FILE
        path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


_DIFFERENT_RESULT = (
    "the workload's result differs from the untouched repository's, so it did not do the "
    "measured work"
)


def _with_round(verdict: Verdict, entry: RoundEntry) -> Verdict:
    metrics = dict(verdict.metrics)
    metrics["improve.best"] = entry.best
    metrics["improve.kept"] = 1.0 if entry.state == "kept" else 0.0
    return verdict.model_copy(update={"metrics": metrics})


def _with_finding(outcome: RoundOutcome, finding: Finding) -> RoundOutcome:
    verdict = outcome.verdict
    update: dict[str, Any] = {"findings": (*verdict.findings, finding)}
    if finding.tampers:
        update["outcome"] = "tampered"
    return replace(outcome, verdict=verdict.model_copy(update=update))


def _objective_error(verdict: Verdict) -> str | None:
    for finding in verdict.findings:
        if finding.code == "objective-failed":
            return str(finding.detail)
    return None


def _trial_status(rounds: list[RoundOutcome]) -> Status:
    if any(each.status == "interrupted" for each in rounds):
        return "interrupted"
    if all(each.status == "could_not_run" for each in rounds):
        return "could_not_run"
    return "completed"


def _value(state: _State) -> float:
    value = state.value
    assert value is not None  # only measured states become the baseline or the best
    return value
