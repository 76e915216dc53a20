"""What mining found, as a JSON-ready model and as a markdown summary.

The markdown is a pure function of :class:`MiningSummary`. A scan alone fills the history
part (:func:`summary_from_scan`); validation later fills ``head_check``, the checked counts,
``validation_seconds`` and each task's ``validated``.
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field

from harnessdrive.mining.candidate import Candidate, GitPath
from harnessdrive.mining.history import ScanResult, SkipReason
from harnessdrive.mining.markdown import code, safe_text
from harnessdrive.mining.test_command import DetectedCommand

DEFAULT_MAX_TASKS = 10


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunRecord(_Model):
    """One run of the test command."""

    exit_code: int | None
    """None when it timed out."""
    seconds: float
    timed_out: bool = False


class CheckRecord(_Model):
    """The test runs that decided a candidate (seed 000's ``check``)."""

    focused: RunRecord | None = None
    """Only the commit's own test files, on the parent: the fast rejection, and the first run
    before the fix (the whole suite holds those files, so it fails when they fail)."""
    before: RunRecord | None = None
    """The whole suite on the parent: only where the command cannot be narrowed."""
    after: RunRecord | None = None
    before_again: RunRecord | None = None
    """The whole suite on the parent once more: only where the command cannot be narrowed."""
    after_again: RunRecord | None = None
    focused_again: RunRecord | None = None
    """The narrowed command on the parent once more: the repeat of ``focused``."""
    focused_after: RunRecord | None = None
    """The narrowed command with the fix: the repeat of ``after`` where ``focused`` ran (the
    whole suite has passed with the fix once; a flaky test of the commit shows here)."""


class RejectedTask(_Model):
    id: str
    commit: str
    subject: str
    reason: str
    detail: str = ""
    """Which step decided, or the error that stopped the check."""

    @classmethod
    def of(cls, candidate: Candidate, reason: str, detail: str = "") -> RejectedTask:
        return cls(
            id=candidate.id,
            commit=candidate.commit,
            subject=candidate.subject,
            reason=reason,
            detail=detail,
        )


class SkipCount(_Model):
    reason: str
    tests: int
    names: list[str] = Field(default_factory=list)
    """The first tests skipped for this reason (``classname::name``)."""


class HeadSkips(_Model):
    """The tests HEAD's run skipped, from its junit report, with the runner's reasons."""

    skipped: int
    total: int
    reasons: list[SkipCount] = Field(default_factory=list)
    many: bool = False
    """More than a tenth skipped: commits whose tests are among them cannot be judged."""


class DriftSample(_Model):
    commit: str
    """The candidate whose parent was sampled."""
    passed: bool
    failing: list[str] = Field(default_factory=list)


class DriftRangeRecord(_Model):
    newest: str
    oldest: str
    commits: int
    """Candidates in the range, skipped without a run of their own."""
    failing: list[str]
    """The failing tests every sample of the range shares."""
    samples: int


class DriftRecord(_Model):
    """The history sampled before the checks: where the suite stops passing today."""

    every: int
    samples: list[DriftSample] = Field(default_factory=list)
    ranges: list[DriftRangeRecord] = Field(default_factory=list)


class EnvironmentCounts(_Model):
    built: list[str] = Field(default_factory=list)
    """Shared environments built during this run (``python-<key>``, ``node-<key>``)."""
    reused: int = 0
    """Copies that found their environment already built."""
    extras: list[str] | None = None
    """The extras HEAD's Python environment installs (None: no shared Python environment)."""
    groups: list[str] | None = None
    """The dependency groups (PEP 735) it installs."""


class MiningCounts(_Model):
    commits: int
    candidates: int
    skipped: dict[SkipReason, int] = Field(default_factory=dict)
    checked: int = 0
    validated: int = 0
    rejected: dict[str, int] = Field(default_factory=dict)
    """Rejection reason (``tests pass before the fix``, ``flaky``, ...) to count."""
    weak: int = 0
    """Candidates set aside for a weak prompt, before any test ran (see ``weak_tasks``)."""
    drift: int = 0
    """Candidates skipped in ranges whose suite fails on this toolchain (see ``drift``)."""


class SummaryTask(_Model):
    id: str
    commit: str
    subject: str
    hidden_tests: list[GitPath]
    gold_files: list[GitPath]
    gold_lines: int
    validated: bool = False
    check: CheckRecord | None = None
    prompt_problems: list[str] = Field(default_factory=list)
    """Why its prompt is weak (kept with --keep-weak)."""
    unstated: list[str] = Field(default_factory=list)
    """What its hidden tests pin that the prompt does not state."""
    prompt_rewritten: bool = False
    """The prompt command gave it a new change request."""

    @classmethod
    def of(
        cls, candidate: Candidate, *, validated: bool = False, check: CheckRecord | None = None
    ) -> SummaryTask:
        return cls(
            id=candidate.id,
            commit=candidate.commit,
            subject=candidate.subject,
            hidden_tests=candidate.hidden_tests,
            gold_files=candidate.gold_files,
            gold_lines=candidate.gold_lines,
            validated=validated,
            check=check,
        )


class MiningSummary(_Model):
    repo: GitPath
    head: str
    since: str
    since_description: str
    shallow: bool = False
    created: str | None = None
    """When mining ran (UTC, ``...Z``)."""
    test_cmd: str
    test_cmd_source: str
    setup_cmd: str | None = None
    """The setup command every task runs: the user's, or the shared-environment link."""
    test_timeout: float | None = None
    head_check: RunRecord | None = None
    """The test command's run at HEAD in a fresh copy, once validation ran it."""
    known_failures: list[str] = Field(default_factory=list)
    """Tests known to fail at HEAD, left out of the test command (``--known-failures``)."""
    head_skips: HeadSkips | None = None
    """What that run skipped and why, where its runner wrote a junit report."""
    counts: MiningCounts
    validation_seconds: float | None = None
    tasks: list[SummaryTask]
    """Validated tasks after a check; before one, the newest candidates."""
    rejected_tasks: list[RejectedTask] = Field(default_factory=list)
    """Checked candidates that were not kept, newest first, with the reason."""
    weak_tasks: list[RejectedTask] = Field(default_factory=list)
    """Candidates set aside for a weak prompt (reason ``weak prompt``, detail: why)."""
    drift: DriftRecord | None = None
    """The history samples and the ranges that cannot be mined."""
    prompt_rewrite_errors: list[str] = Field(default_factory=list)
    """``<id>: why`` for each kept task whose prompt command gave no new request."""
    environments: EnvironmentCounts | None = None
    tasks_file: GitPath | None = None
    """The suite folder the tasks were written to."""
    next_step: str | None = None
    """The command that estimates the runs and their cost for these tasks."""
    head_date: str | None = None
    """HEAD's commit date, when no commit fell in the window (the hint names it)."""


def summary_from_scan(
    scan: ScanResult,
    test_command: DetectedCommand,
    *,
    max_tasks: int = DEFAULT_MAX_TASKS,
    tasks_file: str | None = None,
    next_step: str | None = None,
) -> MiningSummary:
    """The summary of a scan that nothing has checked yet: the newest candidates as tasks."""
    return MiningSummary(
        repo=scan.repo,
        head=scan.head,
        since=scan.since,
        since_description=scan.since_description,
        shallow=scan.shallow,
        test_cmd=test_command.command,
        test_cmd_source=test_command.source,
        counts=MiningCounts(
            commits=scan.counts.commits,
            candidates=scan.counts.candidates,
            skipped=dict(scan.counts.skipped),
        ),
        tasks=[SummaryTask.of(c) for c in scan.candidates[:max_tasks]],
        tasks_file=tasks_file,
        next_step=next_step,
        head_date=scan.head_date,
    )


def format_duration(seconds: float | None) -> str:
    """``0.4 s``, ``45 s``, ``3 min 5 s``, ``2 h 4 min``."""
    if seconds is not None and seconds < 9.95:
        return f"{seconds:.1f} s"  # "0 s" would read as not run at all
    whole = round(seconds or 0)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _by_count(counts: dict[str, int] | dict[SkipReason, int]) -> str:
    ordered = sorted(counts.items(), key=lambda item: -item[1])
    return ", ".join(f"{n} {reason}" for reason, n in ordered)


def headline(summary: MiningSummary) -> str:
    counts, found = summary.counts, len(summary.tasks)
    if found and counts.checked:
        return (
            f"Found {_plural(found, 'task')} in your git history: {counts.validated} of "
            f"{counts.checked} checked commits fail their tests before the change and pass "
            "after it, twice."
        )
    if found:
        return (
            f"Found {_plural(found, 'candidate task')} in your git history. None is checked yet:"
            " run again with --validate to keep only tasks whose tests fail before the change"
            " and pass after it."
        )
    if counts.checked:
        return (
            f"Found no usable tasks: none of {counts.checked} checked commits fails its tests"
            " before the change and passes after it, twice."
        )
    found_none = f"Found no candidate tasks in your git history since {summary.since_description}."
    if counts.commits == 0 and summary.head_date:
        found_none += (
            f" The newest commit is from {summary.head_date}: reach further back with"
            f" --since (a date such as {_year_before(summary.head_date)}, or a number of days)."
        )
    return found_none


def _year_before(day: str) -> str:
    try:
        when = date.fromisoformat(day)
    except ValueError:
        return "2020-01-01"
    return when.replace(year=when.year - 1, day=min(when.day, 28)).isoformat()


def render_summary_markdown(summary: MiningSummary) -> str:
    """The markdown summary of a mining run."""
    counts = summary.counts
    lines = [f"**{safe_text(headline(summary), 1000)}**", ""]

    command = f"Test command: {code(summary.test_cmd)} ({safe_text(summary.test_cmd_source)})."
    if summary.head_check is not None:
        command += f" It passes at HEAD in {format_duration(summary.head_check.seconds)}."
    lines += [command, ""]
    if summary.known_failures:
        left = ", ".join(summary.known_failures[:5])
        more = len(summary.known_failures) - 5
        lines += [
            f"Left out as known to fail at HEAD: {safe_text(left, 600)}"
            + (f" and {more} more" if more > 0 else "")
            + ".",
            "",
        ]
    environment = summary.environments
    if environment is not None and environment.extras is not None:
        extras = ", ".join(environment.extras) or "none"
        groups = ", ".join(environment.groups or []) or "none"
        lines += [
            f"Python environment: extras {safe_text(extras)}; dependency groups"
            f" {safe_text(groups)} (choose with --extras and --groups).",
            "",
        ]
    skips = summary.head_skips
    if skips is not None and skips.skipped:
        said = f"At HEAD {skips.skipped} of {skips.total} tests are skipped"
        if skips.reasons:
            said += ": " + "; ".join(_skip_words(r) for r in skips.reasons)
        if skips.many:
            said = (
                f"**Warning:** {said}. Commits whose tests are among them are rejected as"
                " passing before the fix: install what they need (--extras, --groups or"
                " --setup-cmd)."
            )
        lines += [said + ("" if skips.many else "."), ""]

    if summary.tasks:
        lines += [
            "| # | Task | Change | Hidden test files | Lines in the original fix | Checked |",
            "|---|---|---|---|---|---|",
        ]
        for number, task in enumerate(summary.tasks, 1):
            lines.append(
                f"| {number} | {task.commit[:7]} | {code(task.subject, 70)} "
                f"| {len(task.hidden_tests)} | {task.gold_lines} "
                f"| {'yes' if task.validated else 'no'} |"
            )
        lines.append("")

    history = (
        f"History since {safe_text(summary.since_description)}: "
        f"{_plural(counts.commits, 'commit')}, {counts.candidates} "
        f"{'changes' if counts.candidates == 1 else 'change'} both source and test files."
    )
    if counts.skipped:
        history += f" Skipped: {_by_count(counts.skipped)}."
    if summary.shallow:
        history += " This is a shallow clone, so older commits are not in it."
    lines.append(history)

    if summary.weak_tasks:
        lines.append(
            f"Set aside {_plural(len(summary.weak_tasks), 'commit')} whose prompt is too weak to"
            " grade fairly (--keep-weak checks them too):"
        )
        lines += [
            f"- {t.commit[:7]} {code(t.subject, 70)}: {safe_text(t.detail, 300)}"
            for t in summary.weak_tasks
        ]
    for found in summary.drift.ranges if summary.drift is not None else []:
        tests = ", ".join(found.failing[:5]) + (
            f" and {len(found.failing) - 5} more" if len(found.failing) > 5 else ""
        )
        lines.append(
            f"Cannot be mined on this toolchain: {_plural(found.commits, 'commit')} from"
            f" {found.newest[:7]} back to {found.oldest[:7]}; the suite fails at"
            f" {'its sample' if found.samples == 1 else f'all {found.samples} samples'} there"
            f" ({safe_text(tests, 600)}). Skipped without checking."
        )
    if counts.checked:
        checked = (
            f"Checked {counts.checked} in fresh copies of the repository: {counts.validated} kept"
        )
        if counts.rejected:
            checked += f", {_by_count(counts.rejected)}"
        lines.append(f"{checked}. Checking took {format_duration(summary.validation_seconds)}.")

    if summary.tasks_file is not None:
        label = "Suite" if summary.tasks else "No suite (no task was kept); its summary and logs"
        lines += ["", f"{label}: {code(summary.tasks_file, 300)}"]
    if summary.tasks and counts.checked and summary.next_step:
        lines.append(
            f"Next: {code(summary.next_step, 330)} shows the number of runs and a cost range."
        )
    return "\n".join(lines) + "\n"


def render_summary_json(summary: MiningSummary) -> str:
    return summary.model_dump_json(indent=2) + "\n"


def _skip_words(count: SkipCount) -> str:
    """``SERVICE_URL not set (2: tests.test_a::test_b, tests.test_c::test_d)``."""
    names = ", ".join(safe_text(name, 200) for name in count.names)
    more = ", ..." if names and count.tests > len(count.names) else ""
    said = f"{count.tests}: {names}{more}" if names else str(count.tests)
    return f"{safe_text(count.reason, 200)} ({said})"
