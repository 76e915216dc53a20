"""``harnessdrive show TRIAL``: one trial's prompt, transcript, diff, failing tests, findings,
cost ledger and review, gathered from its folder (the text form is in report/show_text.py).

Everything here was written next to an agent's work and is read as hostile data: files are
read with a size limit, never followed through links, and a file that does not parse is shown
as missing rather than stopping the command.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harnessdrive.accounting.ledger import ledger_costs
from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.export.atif import trajectory_json
from harnessdrive.grading.hostile import UNREADABLE, load_json
from harnessdrive.grading.verdict import Finding
from harnessdrive.grading.witness import canary_file, is_canary
from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.provenance import Provenance, Suppliers
from harnessdrive.store.results import Cost, TrialResult
from harnessdrive.store.review import Review, read_review
from harnessdrive.transcript.models import Event, Transcript

SHOW_SCHEMA = "harnessdrive-show-1"
TEXT_LIMIT = 200_000
"""Characters kept of the prompt, the diff and each test output; the rest is cut, and said so."""
OUTPUT_LIMIT = 4_000
REPORT_LIMIT = 5 * 1024 * 1024
"""Bytes of a junit report read for its failing tests (the grader keeps at most 4 MiB)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FailingTest(_Model):
    name: str
    kind: Literal["failed", "error"]
    message: str = ""
    output: str = ""
    source: str
    """The junit report it came from (``junit-tests.xml``: the deciding tests)."""


class TestCount(_Model):
    __test__ = False  # not a pytest class

    tests: Literal["hidden", "visible"]
    """The deciding (hidden) tests or the ones the agent could see."""
    passed: int
    total: int
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    source: str
    """``junit`` (a per-test report) or ``exit_code`` (the command's status alone)."""


class Clipped(_Model):
    text: str = ""
    cut: bool = False
    """True when the file held more than is shown."""
    file: str | None = None
    """The file in the trial folder, for the rest."""


class TrialView(_Model):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: str = Field(default=SHOW_SCHEMA, alias="schema")
    trial_id: str
    folder: str
    task: str
    variant: str
    harness: str
    harness_version: str | None
    protocol: str | None = None
    plugins: Suppliers | None = None
    """The distribution and version that supplied the harness, grader kind and protocol."""
    details: dict[str, Any] = Field(default_factory=dict)
    """The deciding verdict's kind-specific data (``Verdict.details``)."""
    repetition: int
    attempt: int
    status: str
    outcome: str
    round: int
    rounds: int
    reverted: tuple[int, ...] = ()
    """Rounds of an improvement trial whose state was thrown away."""
    prompt: Clipped
    events: tuple[Event, ...]
    final_message: str | None
    diff: Clipped
    failing_tests: tuple[FailingTest, ...]
    test_log: Clipped | None
    """The deciding test command's log when it failed and no junit report names a test."""
    findings: tuple[Finding, ...]
    cost: Cost
    ledger: dict[str, Any] | None
    """``cost.json``: the per-call prices, when the trial was priced."""
    provenance: Provenance | None
    review: Review | None
    model: str | None = None
    """The model the API reported, else the one the variant asked for."""
    effort: str | None = None
    treatment: str | None = None
    agent_seconds: float = 0.0
    total_seconds: float = 0.0
    tokens: int = 0
    """Every tier of every call: input, cache reads and writes, output."""
    calls: int = 0
    turns: int | None = None
    tests: tuple[TestCount, ...] = ()
    """How many tests passed, for every trial that was graded (passing ones too)."""

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=2)


def find_trial(results: Path, wanted: str) -> TrialPaths:
    """The folder of the trial ``wanted`` names: a trial folder, a trial id, or the end of one
    (``task/variant/r1``) that only one trial of the results folder has."""
    direct = Path(wanted)
    if (direct / "result.json").is_file():
        return TrialPaths(direct.resolve())
    trials = results / "trials"
    ids = sorted(
        path.parent.relative_to(trials).as_posix()
        for path in trials.glob("**/result.json")
        if "previous" not in path.relative_to(trials).parts
    )
    key = wanted.strip("/")
    matches = (
        [i for i in ids if i == key]
        or [i for i in ids if i.endswith("/" + key)]
        # A task or TASK/VARIANT alone names its trials: the message below lists them.
        or [i for i in ids if f"/{key}/" in f"/{i}/"]
    )
    if len(matches) == 1:
        return TrialPaths(trials / matches[0])
    if not matches:
        hint = did_you_mean(key, ids) if ids else ""
        raise UserError(f"no trial {wanted!r} in {results}{hint}")
    shown = ", ".join(matches[:5]) + (" ..." if len(matches) > 5 else "")
    raise UserError(f"{wanted!r} names {len(matches)} trials: {shown}; give more of the id")


def trial_view(paths: TrialPaths) -> TrialView:
    """Everything ``show`` says about the trial in ``paths``."""
    try:
        result = TrialResult.model_validate_json(_read_bytes(paths.result))
    except (ValidationError, OSError) as exc:
        raise UserError(f"{paths.result}: not a readable result: {_first_line(exc)}") from None
    number = max(len(result.rounds), 1)
    counted, reverted = _counted_round(result)
    if counted is not None:  # an improvement trial: the diff of the state that counted
        number = max(counted, 1)
    round_root = paths.root if number == 1 else paths.root / "rounds" / str(number)
    transcript = _transcript(round_root / "transcript.json")
    grading = result.grading
    failing = _failing_tests(round_root)
    hidden = grading.hidden if grading is not None else None
    # Planted canaries make an honest run exit non-zero: only another status is a failure.
    failed_run = hidden is not None and hidden.exit_code not in (hidden.expected_exit, None)
    test_log = (
        _clipped(round_root, "grade-tests.log", OUTPUT_LIMIT, tail=True)
        if failed_run and not any(t.source == "junit-tests.xml" for t in failing)
        else None
    )
    return TrialView(
        trial_id=result.trial_id,
        folder=str(paths.root),
        task=result.task,
        variant=result.variant_label,
        harness=result.harness,
        harness_version=result.harness_version,
        protocol=result.protocol,
        plugins=result.plugins,
        details=_details(result),
        repetition=result.repetition,
        attempt=result.attempt,
        status=result.status,
        outcome=result.outcome,
        round=number if counted != 0 else 0,
        rounds=len(result.rounds),
        reverted=reverted,
        prompt=_clipped(paths.root, "prompt.md", TEXT_LIMIT),
        events=transcript.events,
        final_message=transcript.final_message,
        diff=_clipped(round_root, "diff.patch", TEXT_LIMIT) if counted != 0 else Clipped(),
        failing_tests=failing,
        test_log=test_log,
        findings=grading.findings if grading is not None else (),
        cost=result.cost,
        ledger=_ledger(paths.cost),
        provenance=result.provenance,
        review=read_review(paths, result),
        model=result.agent.model or result.variant.model,
        effort=result.variant.effort,
        treatment=result.variant.treatment.name if result.variant.treatment else None,
        agent_seconds=result.seconds.agent,
        total_seconds=result.seconds.total,
        tokens=result.agent.usage.total,
        calls=result.agent.calls,
        turns=result.agent.turns,
        tests=_test_counts(result),
    )


def _test_counts(result: TrialResult) -> tuple[TestCount, ...]:
    grading = result.grading
    if grading is None:
        return ()
    found = []
    for kind, run in (("hidden", grading.hidden), ("visible", grading.visible)):
        if run is not None:
            found.append(
                TestCount(
                    tests=cast(Literal["hidden", "visible"], kind),
                    passed=run.passed,
                    total=run.total,
                    failed=run.failed,
                    errors=run.errors,
                    skipped=run.skipped,
                    source=run.source,
                )
            )
    return tuple(found)


def _read_bytes(path: Path, limit: int | None = None) -> bytes:
    if path.is_symlink():
        raise OSError(f"{path.name} is a link")
    with path.open("rb") as handle:
        return handle.read() if limit is None else handle.read(limit + 1)


def _clipped(root: Path, name: str, limit: int, *, tail: bool = False) -> Clipped:
    path = root / name
    if not path.is_file() or path.is_symlink():
        return Clipped(file=None)
    size = path.stat().st_size
    with path.open("rb") as handle:
        if tail and size > limit:
            handle.seek(size - limit)
        data = handle.read(limit)
    text = data.decode("utf-8", "replace")
    return Clipped(text=text, cut=size > limit, file=str(path))


def _transcript(path: Path) -> Transcript:
    try:
        return Transcript.model_validate_json(_read_bytes(path))
    except ValidationError:
        return Transcript()
    except UNREADABLE:
        return Transcript()


def _ledger(path: Path) -> dict[str, Any] | None:
    try:
        data = load_json(_read_bytes(path, TEXT_LIMIT * 50), path.name, max_bytes=TEXT_LIMIT * 50)
    except UNREADABLE:
        return None
    return data if isinstance(data, dict) else None


def _failing_tests(root: Path) -> tuple[FailingTest, ...]:
    """Every failed or erroring test case of the deciding and the visible junit reports."""
    found: dict[tuple[str, str], FailingTest] = {}
    for name in ("junit-tests.xml", "junit-visible.xml"):
        path = root / name
        if path.is_file() and not path.is_symlink():
            for test in _failing_in(path, _canaries(path)):
                # A test both reports hold failed once: the deciding report's copy is kept.
                found.setdefault((test.name, test.message), test)
    return tuple(found.values())


def _failing_in(path: Path, canaries: list[tuple[str, str]]) -> Iterator[FailingTest]:
    """The failing cases of one report, read incrementally from its first
    :data:`REPORT_LIMIT` bytes: a report that is cut, malformed or declares an encoding the
    parser cannot read shows the cases found before the trouble."""
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("end",))
    try:
        with path.open("rb") as handle:
            left = REPORT_LIMIT
            while left > 0 and (chunk := handle.read(min(left, 256 * 1024))):
                left -= len(chunk)
                parser.feed(chunk)
                events = cast(Iterator[tuple[str, object]], parser.read_events())
                for _, case in events:
                    if isinstance(case, ET.Element) and case.tag == "testcase":
                        failing = _failing_case(case, path.name, canaries)
                        case.clear()
                        if failing is not None:
                            yield failing
    except UNREADABLE:
        return


def _failing_case(
    case: ET.Element, source: str, canaries: list[tuple[str, str]]
) -> FailingTest | None:
    for child in case:
        if child.tag in ("failure", "error"):
            classname, name = case.get("classname", ""), case.get("name", "")
            if is_canary(classname, name, canaries):
                return None  # the grader's own witnesses, planted to fail; never the agent's
            return FailingTest(
                name="::".join(p for p in (classname, name) if p)[:OUTPUT_LIMIT],
                kind="failed" if child.tag == "failure" else "error",
                message=(child.get("message") or "")[:OUTPUT_LIMIT],
                output=(child.text or "")[-OUTPUT_LIMIT:],
                source=source,
            )
    return None


def _canaries(junit: Path) -> list[tuple[str, str]]:
    try:
        rows = load_json(
            _read_bytes(canary_file(junit), 1_000_000), "canaries", max_bytes=1_000_000
        )
    except UNREADABLE:
        return []
    if not isinstance(rows, list):
        return []
    return [
        (str(row.get("container", "")), str(row.get("name", "")))
        for row in rows
        if isinstance(row, dict)
    ]


def _counted_round(result: TrialResult) -> tuple[int | None, tuple[int, ...]]:
    """An improvement trial's round whose state counted (0: none was kept, the untouched
    repository counted) and its reverted rounds; None for any other trial."""
    marked = [
        (each.number, each.grading.metrics.get("improve.kept"), each.note or "")
        for each in result.rounds
        if each.grading is not None
    ]
    if not any(kept is not None for _, kept, _ in marked):
        return None, ()
    reverted = tuple(n for n, kept, note in marked if not kept and note.endswith("reverted"))
    if any(note.endswith("carried") for _, _, note in marked):
        return len(result.rounds), reverted  # without keep_best the last state counts
    kept_rounds = [n for n, kept, _ in marked if kept]
    return (kept_rounds[-1] if kept_rounds else 0), reverted


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def trial_trajectory(paths: TrialPaths) -> str:
    """The trial's last round as an ATIF trajectory (export/atif.py), made from its files."""
    view = trial_view(paths)
    result = TrialResult.model_validate_json(_read_bytes(paths.result))
    number = max(len(result.rounds), 1)
    transcripts = [
        _transcript((paths.root if n == 1 else paths.root / "rounds" / str(n)) / "transcript.json")
        for n in range(1, number + 1)
    ]
    costs = ledger_costs(paths.cost, [len(each.calls) for each in transcripts])
    return trajectory_json(result, transcripts[-1], view.prompt.text, costs[-1])


def _details(result: TrialResult) -> dict[str, Any]:
    verdict = result.grading
    return dict(verdict.details) if verdict is not None else {}
