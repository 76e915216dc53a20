"""The scoreboard: harnesses compared only on tasks every one of them finished.

A trial *finished* when it was graded (completed, timed out or crashed, with a verdict). A harness
with no finished trial is listed apart as could-not-run, so a login error on one side does not
hide a task from the others. Rank: most passes, then lowest cost per pass.

Cost per pass is everything charged on the compared tasks, failed trials included, divided by the
passes. A trial whose cost is not a full measurement (estimated, unmeasured, unpriced, or priced
from a cut-off run's calls) still counts what it was charged and is shown as "+k*", footnoted.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from harnessdrive.grading.claims import Claim
from harnessdrive.grading.scope import OUT_OF_SCOPE
from harnessdrive.grading.verdict import Finding
from harnessdrive.report.details import TrialDetail
from harnessdrive.report.improvement import improvement_notes
from harnessdrive.report.left_out import left_out_note
from harnessdrive.report.mix import describe_mix, shared_identity
from harnessdrive.report.reasons import failure_reason, is_not_graded, status_word
from harnessdrive.report.scores import agent_seconds, logged_usage, mean_score, tokens
from harnessdrive.report.statistics import CONFIDENCE, Bounds, Statistics, analyse
from harnessdrive.report.suspects import suspect_notes
from harnessdrive.report.trust_counting import TrustCounting
from harnessdrive.report.visibility import split_counts
from harnessdrive.stats.decisions import MIN_TASKS
from harnessdrive.store.results import TrialResult
from harnessdrive.workspace.names import NameText, model_json

REPORT_SCHEMA = "harnessdrive-report-3"
"""2 added the statistics (``statistics``, each harness's ``interval`` and ``versus_best``)
and the trials' ``details``; 3 the comparison model: ``headline`` is the answer in words,
``pass_rate`` the mean per-task rate, rows ranked by it (``rank``), and ``statistics`` carries
every pair's decision (docs/report.md)."""
FINISHED_STATUSES = ("completed", "timeout", "crashed")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HarnessRow(_Model):
    variant: str
    harness: str
    versions: tuple[str, ...]
    trials: int
    """Finished trials on the compared tasks."""
    passed: int
    pass_rate: float | None
    """The mean over the compared tasks of each task's pass rate (repeats averaged first)."""
    median_minutes: float | None
    cost_per_pass: float | None
    """Charged spend a task on the compared tasks (failed trials included) over the pass rate,
    tasks weighing the same (report/statistics.py); None when no trial passed or no cost was
    measured at all."""
    total_cost: float
    unmeasured: int
    """Trials on the compared tasks whose cost is not a full measurement ("+k*")."""
    median_lines_changed: float | None
    tampered: int
    timeouts: int
    crashed: int
    could_not_run: int
    """Over the whole run, not only the compared tasks."""
    first_error: str | None = None
    median_tokens: float | None = None
    """Median tokens (every tier) of the finished trials on the compared tasks that logged usage."""
    cost_mismatches: int = 0
    """Trials on the compared tasks whose cost is more than 2% from the harness's own figure."""
    out_of_scope: int = 0
    """Finished trials on the compared tasks that changed files outside the task's scope."""
    visible_passed: int = 0
    visible_trials: int = 0
    """Finished trials on the compared tasks that ran the visible tests; ``visible_passed`` of
    them passed those."""
    hidden_passed: int = 0
    hidden_trials: int = 0
    """Finished trials on the compared tasks that ran the hidden tests; ``hidden_passed`` of
    them passed those."""
    not_graded: int = 0
    """Trials the agent ran but the grader could not evaluate, over the whole run."""
    mean_score: float | None = None
    accepted: int | None = None
    """Passes a person accepted (``harnessdrive review``); None when none was reviewed."""
    rejected: int = 0
    """Passes a person rejected."""
    """Mean score of the finished trials on the compared tasks that have one (else None)."""
    interval: Bounds | None = None
    """The two-level interval of the pass rate (report/statistics.py)."""
    versus_best: str | None = None
    """``best``, ``tied``, ``baseline``, or this harness's verdict against the best."""
    rank: int = 0
    """By the mean per-task pass rate; equal rates share a rank."""


class TaskCell(_Model):
    trials: int
    passed: int
    outcomes: tuple[str, ...]
    text: str


class TaskRow(_Model):
    task: str
    title: str
    compared: bool
    cells: dict[str, TaskCell]


class TrialRow(_Model):
    trial_id: str
    task: str
    variant: str
    harness: str
    repetition: int
    attempt: int
    status: str
    outcome: str
    visible_passed: int | None
    visible_total: int | None
    hidden_passed: int | None
    hidden_total: int | None
    hidden_source: str | None = None
    """Where the hidden counts come from: ``junit``, or ``exit_code`` alone."""
    findings: tuple[Finding, ...]
    files_changed: int
    lines_added: int
    lines_deleted: int
    seconds: float
    agent_seconds: float
    cost_usd: float | None
    cost_source: str
    error: str | None
    charged_usd: float = 0.0
    reported_usd: float | None = None
    cost_mismatch: bool = False
    tokens: int = 0
    cost_note: str | None = None
    paths: tuple[NameText, ...] = ()
    """The changed file names (raw bytes escaped as in result.json, docs/results.md)."""
    left_out: tuple[Finding, ...] = ()
    score: float | None = None
    metrics: dict[str, float] = Field(default_factory=dict)
    rounds: int = 1
    """How many rounds the trial ran; the last one decided its verdict."""
    details: dict[str, JsonValue] = Field(default_factory=dict)
    """The deciding verdict's kind-specific data (a differential grading's shrunk
    counterexamples, docs/differential.md)."""
    claims: tuple[Claim, ...] = ()
    """The agent's checkable claims, each checked against the verdict."""


class Report(_Model):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: str = Field(default=REPORT_SCHEMA, alias="schema")
    run_id: str | None
    suite: str | None
    headline: str
    tasks_compared: int
    tasks_total: int
    sandbox: tuple[str, ...]
    spent_usd: float
    harnesses: tuple[HarnessRow, ...]
    could_not_run: tuple[HarnessRow, ...]
    tasks: tuple[TaskRow, ...]
    trials: tuple[TrialRow, ...]
    notes: tuple[str, ...]
    suite_id: str | None = None
    """The suite's identity (``<suite>@<hash of its folder>``) when every trial shares one."""
    mixed: tuple[str, ...] = ()
    """Each way the counted trials differ: other runs, suites, suite versions, sandboxes,
    harnessdrive versions, task versions."""
    statistics: Statistics = Statistics()
    details: tuple[TrialDetail, ...] = ()
    """Each trial's diff, test output, transcript excerpt and costs, cut to a budget; only
    when the report was loaded with them (the HTML and JSON formats)."""
    results_href: str | None = None
    """Where the results folder is from the report's file, for links to the trial folders."""
    trust: TrustCounting | None = None
    """The tasks the audit left out (or --all-tasks counted) and those no audit speaks for;
    None when the report was made without trust records (report/trust_counting.py)."""

    def to_json(self) -> str:
        return model_json(self, by_alias=True)


def finished(result: TrialResult) -> bool:
    return result.status in FINISHED_STATUSES and result.outcome != "not_graded"


def build_report(
    results: Sequence[TrialResult],
    *,
    variants: Sequence[str] | None = None,
    run_id: str | None = None,
    suite: str | None = None,
    reviews: Mapping[str, str] | None = None,
    accepted_only: bool = False,
    margin: float | None = None,
    confidence: float = CONFIDENCE,
    min_tasks: int = MIN_TASKS,
    seed: int = 0,
    pooled: bool = False,
    untrusted: Collection[str] = (),
    trust: TrustCounting | None = None,
) -> Report:
    """The scoreboard of ``results``; ``reviews`` (trial id to ``accepted`` or ``rejected``,
    store/review.py) adds the accepted passes beside the passes, and with ``accepted_only``
    only accepted passes count as passes in the rates, ranks and verdicts. ``pooled`` (a
    pytest session, whose cases each have a matrix of their own): every task an arm finished
    counts for that arm, and each pair of arms is compared on the tasks both finished.
    Results on ``untrusted`` tasks (audit/counting.py reads each task's audit.json) are left
    out, with a note that says so. ``trust``: what :func:`count_trusted` left out of
    ``results`` already, which every format shows."""
    left_out = sorted({r.task for r in results if r.task in untrusted})
    results = [r for r in results if r.task not in untrusted]
    order = list(variants) if variants else list(dict.fromkeys(r.variant_label for r in results))
    tasks = list(dict.fromkeys(r.task for r in results))
    by_variant = {v: [r for r in results if r.variant_label == v] for v in order}
    done = {v: {r.task for r in by_variant[v] if finished(r)} for v in order}
    active = [v for v in order if done[v]]
    by_every = any if pooled else all
    compared = [t for t in tasks if active and by_every(t in done[v] for v in active)]
    rows = [
        _reviewed(
            _harness_row(v, by_variant[v], set(compared)), by_variant[v], set(compared), reviews
        )
        for v in active
    ]
    counted = [r for r in results if finished(r) and r.task in compared]
    statistics = analyse(
        counted,
        [row.variant for row in rows],
        reviews=reviews,
        accepted_only=accepted_only,
        margin=margin,
        confidence=confidence,
        min_tasks=min_tasks,
        seed=seed,
    )
    ranked = [arm.variant for arm in statistics.arms]
    rows.sort(key=lambda row: ranked.index(row.variant) if row.variant in ranked else len(ranked))
    rows = [_with_statistics(row, statistics) for row in rows]
    broken = tuple(_harness_row(v, by_variant[v], set()) for v in order if v not in active)
    titles = {r.task: r.task_title for r in results}
    task_rows = tuple(
        TaskRow(
            task=t,
            title=titles.get(t, ""),
            compared=t in compared,
            cells={v: _cell([r for r in by_variant[v] if r.task == t]) for v in order},
        )
        for t in tasks
    )
    return Report(
        run_id=run_id,
        suite=suite,
        headline=statistics.answer if statistics.arms else _headline(rows, len(compared)),
        tasks_compared=len(compared),
        tasks_total=len(tasks),
        sandbox=tuple(sorted({r.sandbox for r in results})),
        spent_usd=round(sum(r.cost.charged_usd for r in results), 6),
        harnesses=tuple(rows),
        could_not_run=broken,
        tasks=task_rows,
        trials=tuple(_trial_row(r) for r in results),
        notes=tuple([left_out_note(left_out)] if left_out else [])
        + tuple(_notes(results, tasks, compared, broken))
        + tuple(suspect_notes([r for r in results if finished(r)])),
        suite_id=shared_identity(results),
        mixed=describe_mix(results, run_id),
        statistics=statistics,
        trust=trust,
    )


def _with_statistics(row: HarnessRow, statistics: Statistics) -> HarnessRow:
    fields = statistics.row_fields(row.variant)
    if row.cost_per_pass is None:
        # No pass, or no cost measured at all: nothing the statistics can divide.
        fields["cost_per_pass"] = None
    return row.model_copy(update=fields)


def _harness_row(variant: str, results: list[TrialResult], compared: set[str]) -> HarnessRow:
    scored = [r for r in results if finished(r) and r.task in compared]
    passed = sum(r.outcome == "pass" for r in scored)
    on_compared = [r for r in results if r.task in compared and r.status != "skipped"]
    unmeasured = sum(not r.cost.measured for r in on_compared)
    total_cost = round(sum(r.cost.charged_usd for r in on_compared), 6)
    measured = any(r.cost.measured for r in on_compared)
    cost_per_pass = round(total_cost / passed, 6) if passed and measured else None
    errors = [failure_reason(r) for r in results]
    return HarnessRow(
        variant=variant,
        harness=results[0].harness if results else variant,
        versions=tuple(sorted({r.harness_version for r in results if r.harness_version})),
        trials=len(scored),
        passed=passed,
        pass_rate=round(passed / len(scored), 4) if scored else None,
        median_minutes=_median([agent_seconds(r) / 60 for r in scored]),
        cost_per_pass=cost_per_pass,
        total_cost=total_cost,
        unmeasured=unmeasured,
        median_lines_changed=_median([r.diff.lines_changed for r in scored]),
        tampered=sum(r.outcome == "tampered" for r in scored),
        timeouts=sum(r.status == "timeout" for r in scored),
        crashed=sum(r.status == "crashed" for r in scored),
        could_not_run=sum(r.status == "could_not_run" for r in results),
        first_error=next((e for e in errors if e), None),
        median_tokens=_median([tokens(r) for r in scored if logged_usage(r)]),
        cost_mismatches=sum(r.cost.mismatch for r in on_compared),
        out_of_scope=sum(_out_of_scope(r) for r in scored),
        **split_counts(scored),
        not_graded=sum(is_not_graded(r) for r in results),
        mean_score=mean_score(scored),
    )


def _reviewed(
    row: HarnessRow,
    results: list[TrialResult],
    compared: set[str],
    reviews: Mapping[str, str] | None,
) -> HarnessRow:
    passes = [r for r in results if finished(r) and r.task in compared and r.outcome == "pass"]
    decided = [reviews[r.trial_id] for r in passes if reviews and r.trial_id in reviews]
    if not decided:
        return row
    accepted = sum(d == "accepted" for d in decided)
    return row.model_copy(update={"accepted": accepted, "rejected": len(decided) - accepted})


def _out_of_scope(result: TrialResult) -> bool:
    grading = result.grading
    return grading is not None and any(f.code == OUT_OF_SCOPE for f in grading.findings)


def _cell(results: list[TrialResult]) -> TaskCell:
    if not results:
        return TaskCell(trials=0, passed=0, outcomes=(), text="not run")
    outcomes = tuple(_word(r) for r in results)
    passed = sum(r.outcome == "pass" for r in results)
    if len(results) == 1:
        text = outcomes[0]
    else:
        graded = sum(finished(r) for r in results)
        text = f"{passed}/{graded} pass" if graded else outcomes[0]
    if any(_exit_code_only(r) for r in results):
        text += EXIT_CODE_MARK
    return TaskCell(trials=len(results), passed=passed, outcomes=outcomes, text=text)


EXIT_CODE_MARK = " *"


def _exit_code_only(result: TrialResult) -> bool:
    hidden = result.grading.hidden if result.grading else None
    return hidden is not None and hidden.source == "exit_code"


def _word(result: TrialResult) -> str:
    if not finished(result):
        return status_word(result)
    word: str = result.outcome
    if result.status == "timeout":
        word += " (time limit)"
    elif result.status == "crashed":
        word += " (crashed)"
    return word


def _trial_row(result: TrialResult) -> TrialRow:
    grading = result.grading
    visible = grading.visible if grading else None
    hidden = grading.hidden if grading else None
    return TrialRow(
        trial_id=result.trial_id,
        task=result.task,
        variant=result.variant_label,
        harness=result.harness,
        repetition=result.repetition,
        attempt=result.attempt,
        status=result.status,
        outcome=result.outcome,
        visible_passed=visible.passed if visible else None,
        visible_total=visible.total if visible else None,
        hidden_passed=hidden.passed if hidden else None,
        hidden_total=hidden.total if hidden else None,
        hidden_source=hidden.source if hidden else None,
        findings=grading.findings if grading else (),
        files_changed=result.diff.files_changed,
        lines_added=result.diff.lines_added,
        lines_deleted=result.diff.lines_deleted,
        seconds=result.seconds.total,
        agent_seconds=agent_seconds(result),
        cost_usd=result.cost.usd,
        cost_source=result.cost.source,
        error=(grading.error if grading and grading.error else None) or result.agent.error,
        charged_usd=result.cost.charged_usd,
        reported_usd=result.cost.reported_usd,
        cost_mismatch=result.cost.mismatch,
        tokens=tokens(result),
        cost_note=result.cost.note,
        paths=result.diff.paths,
        left_out=grading.left_out if grading else (),
        score=result.score,
        metrics=result.metrics,
        rounds=len(result.rounds),
        details=grading.details if grading else {},
        claims=grading.claims if grading else (),
    )


def _headline(rows: list[HarnessRow], compared: int) -> str:
    if not rows:
        return "No harness finished a task yet."
    parts = [f"{row.variant} passed {row.passed} of {row.trials}" for row in rows]
    noun = "task" if compared == 1 else "tasks"
    return f"On {compared} {noun}: " + "; ".join(parts) + "."


def _notes(
    results: Sequence[TrialResult],
    tasks: list[str],
    compared: list[str],
    broken: tuple[HarnessRow, ...],
) -> list[str]:
    notes = []
    left_out = [t for t in tasks if t not in compared]
    if left_out:
        notes.append(
            f"Left out of the comparison (not finished by every harness): {', '.join(left_out)}."
        )
    timeouts = sum(r.status == "timeout" for r in results)
    if timeouts:
        notes.append(f"{timeouts} trial(s) hit the time limit and were graded on what they left.")
    interrupted = sum(r.status == "interrupted" for r in results)
    if interrupted:
        notes.append(f"{interrupted} trial(s) were interrupted; the same command runs them again.")
    skipped = sum(r.status == "skipped" for r in results)
    if skipped:
        notes.append(f"{skipped} trial(s) were skipped; the same command runs them again.")
    for row in broken:
        what = "could not run" if row.could_not_run else "got no verdict"
        notes.append(f"{row.variant} {what}: {row.first_error or 'see agent.stderr'}.")
    ungraded = [r for r in results if r.outcome == "not_graded" and r.grading and r.grading.error]
    if ungraded:
        first = ungraded[0].grading.error if ungraded[0].grading else None
        notes.append(f"{len(ungraded)} trial(s) were not graded; the machinery failed: {first}.")
    notes.extend(_cost_notes(results))
    notes.extend(improvement_notes(results))
    if any(_exit_code_only(r) for r in results):
        notes.append(
            f"{EXIT_CODE_MARK.strip()}: the test command gave no per-test report, so its exit "
            "status alone decided; code under test can forge an exit status."
        )
    if any(r.sandbox == "bwrap" for r in results):
        notes.append(
            "Ran in bubblewrap (--sandbox bwrap): agents saw the system read-only, their own "
            "workspace and a private HOME and /tmp, never the hidden tests, the results or other "
            "trials; grading ran in a sandbox of its own without network."
        )
    if any(r.sandbox == "none" for r in results):
        notes.append(
            "Ran without a sandbox (--sandbox none): agents could read and write outside their "
            "workspace; hostile agents are not contained."
        )
    return notes


def _cost_notes(results: Sequence[TrialResult]) -> list[str]:
    notes = []
    mismatched = [r for r in results if r.cost.mismatch]
    if mismatched:
        names = ", ".join(sorted({r.variant_label for r in mismatched}))
        notes.append(
            f"{len(mismatched)} trial(s) cost more than 2% apart from the harness's own figure "
            f"({names}); result.json keeps both (cost.usd, cost.reported_usd)."
        )
    estimated = sum(r.cost.source == "estimated" or r.cost.estimate is not None for r in results)
    if estimated:
        notes.append(f"{estimated} trial(s) left no usage record and were charged a high estimate.")
    unpriced = sum(r.cost.source == "unpriced" for r in results)
    if unpriced:
        notes.append(f"{unpriced} trial(s) used a model without a price; it counts $0.")
    subscription = sum(r.cost.billing == "subscription" for r in results)
    if subscription:
        notes.append(
            f"{subscription} trial(s) were billed to a subscription; their cost is the "
            "API-equivalent at list prices."
        )
    return notes


def _median(values: list[float] | list[int]) -> float | None:
    return round(float(statistics.median(values)), 3) if values else None
