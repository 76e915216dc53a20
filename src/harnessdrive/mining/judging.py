"""What one test run of a candidate says: its outcome, the reason it rejects the candidate
(if it does), and that reason in words for mined.json."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from harnessdrive.grading.verdict import Finding, Verdict
from harnessdrive.mining.skips import MAX_NAMED, skipped_tests
from harnessdrive.mining.summary import RunRecord
from harnessdrive.protocols.known_change import setup_failed

RejectReason = Literal[
    "tests pass before the fix",
    "tests fail with the fix",
    "tests skip with the fix",
    "flaky",
    "tests time out with the fix",
    "setup command failed",
    "could not copy the commit",
    "the fix trips a tamper check",
]
REJECT_REASONS: tuple[RejectReason, ...] = get_args(RejectReason)  # in the order above
_BEFORE_STEPS = frozenset({"before", "before_again", "focused", "focused_again"})
_REPEAT_STEPS = frozenset({"before_again", "after_again", "focused_again", "focused_after"})


@dataclass(frozen=True)
class TestOutcome:
    record: RunRecord
    passed: bool
    verdict: Verdict | None = None
    setup_failed: bool = False

    @property
    def timed_out(self) -> bool:
        return self.record.timed_out

    @property
    def tampered(self) -> bool:
        return self.verdict is not None and self.verdict.outcome == "tampered"


def outcome_of(verdict: Verdict) -> TestOutcome:
    run = verdict.hidden
    setup = verdict.setup
    if setup is not None and setup_failed(verdict):
        return TestOutcome(RunRecord(exit_code=None, seconds=setup.seconds), False, verdict, True)
    if run is None:
        return TestOutcome(RunRecord(exit_code=None, seconds=0.0), False, verdict)
    # The witness's planted failures make an all-passing run exit 1; record the tests' own status.
    status = 0 if run.succeeded else run.exit_code
    record = RunRecord(
        exit_code=None if run.timed_out else status,
        seconds=run.seconds,
        timed_out=run.timed_out,
    )
    return TestOutcome(record, verdict.outcome == "pass", verdict)


def judge(label: str, outcome: TestOutcome) -> RejectReason | None:
    """Why a run's result rejects the candidate, or None when it is the expected one."""
    before = label in _BEFORE_STEPS
    again = label in _REPEAT_STEPS
    if before:
        if outcome.passed:  # a time-out before the change is a failure: a hang can be the bug
            return "flaky" if again else "tests pass before the fix"
        return None
    if outcome.passed:
        return None
    if outcome.tampered:
        return "the fix trips a tamper check"
    if again:
        return "flaky"
    if outcome.timed_out:
        return "tests time out with the fix"
    return (
        "tests skip with the fix" if _skipped_only(outcome.verdict) else "tests fail with the fix"
    )


def _skipped_only(verdict: Verdict | None) -> bool:
    """Nothing failed, but some of the commit's own tests were skipped (a conftest.py that skips
    without an optional dependency or a variable): skipped, which is not passed."""
    run = verdict.hidden if verdict is not None else None
    if run is None or run.failed or not run.hidden_outcomes:
        return False
    outcomes = list(run.hidden_outcomes.values())
    skipped = outcomes.count("skipped")
    # A hidden test skipped where its file does not say it may skip counts as an error.
    return skipped > 0 and run.errors <= skipped and set(outcomes) <= {"passed", "skipped"}


_STEP_WORDS = {
    "before": "the whole suite before the fix",
    "after": "the whole suite with the fix",
    "before_again": "the whole suite before the fix, the second time",
    "after_again": "the whole suite with the fix, the second time",
    "focused_again": "the commit's own tests before the fix, the second time",
    "focused_after": "the commit's own tests with the fix, the second time",
}


def detail(label: str, outcome: TestOutcome, logs: Path, suite: Path) -> str:
    """What the deciding step found, in words, and where its log is (for mined.json)."""
    run = outcome.verdict.hidden if outcome.verdict is not None else None
    if outcome.timed_out:
        found = "timed out"
    elif run is not None and run.total:
        found = f"{run.passed} of {run.total} tests passed"
        if run.skipped:
            found += f", {run.skipped} skipped"
    else:
        found = f"exit status {outcome.record.exit_code}"
    if outcome.tampered and outcome.verdict is not None:
        found += "; " + "; ".join(_finding(f) for f in outcome.verdict.findings if f.tampers)
    if judge(label, outcome) == "tests skip with the fix" and run is not None:
        found += "; skipped: " + _skipped_words(run.hidden_outcomes or {}, logs)
    log = logs / "grade-tests.log"
    where = log.relative_to(suite) if log.is_relative_to(suite) else log
    return f"{label}: {_STEP_WORDS.get(label, label)}: {found} (log: {where.as_posix()})"


def _skipped_words(outcomes: Mapping[str, str], logs: Path) -> str:
    """``tests/test_a.py::test_b (SERVICE_URL not set)``: the commit's skipped tests, each with
    the reason its runner gave where the report has one."""
    reasons = skipped_tests(logs)
    words = []
    for test, outcome in outcomes.items():
        if outcome != "skipped":
            continue
        target, _, name = test.partition("::")
        module = target.removesuffix(".py").replace("/", ".")
        why = next(
            (
                reason
                for case, reason in reasons.items()
                if case.partition("::")[2].split("[", 1)[0] == name
                and (case.startswith(module + "::") or case.startswith(module + "."))
            ),
            None,
        )
        words.append(f"{test} ({why})" if why else test)
    shown = words[:MAX_NAMED]
    return ", ".join(shown) + (
        f" and {len(words) - len(shown)} more" if words[len(shown) :] else ""
    )


def _finding(finding: Finding) -> str:
    """``protected-path pyproject.toml: ...``: what a tamper finding says, kept short."""
    text = finding.code + (f" {finding.path}" if finding.path else "")
    detail = " ".join(str(finding.detail).split())
    return text + (f": {detail[:200]}" if detail else "")
