"""The summary of a finished mining run, from everything the run found."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from harnessdrive.mining.checks import CandidateResult
from harnessdrive.mining.drift import DriftReport
from harnessdrive.mining.environments import EnvironmentStore
from harnessdrive.mining.history import ScanResult
from harnessdrive.mining.prompt_review import Review
from harnessdrive.mining.summary import (
    DriftRangeRecord,
    DriftRecord,
    DriftSample,
    EnvironmentCounts,
    HeadSkips,
    MiningCounts,
    MiningSummary,
    RejectedTask,
    SkipCount,
    SummaryTask,
)
from harnessdrive.mining.taskfiles import TaskSettings
from harnessdrive.mining.test_command import DetectedCommand
from harnessdrive.mining.validation import HeadCheck, ValidationOutcome

# Two common CLIs, each pinned to a model with a bundled price so the estimate has a figure.
NEXT_STEP_VARIANTS = "claude,codex --model claude=claude-sonnet-4-5 --model codex=gpt-5"


@dataclass(frozen=True)
class Finished:
    scan: ScanResult
    command: DetectedCommand
    settings: TaskSettings
    head: HeadCheck | None
    outcome: ValidationOutcome
    store: EnvironmentStore
    suite: Path
    review: Review
    drift: DriftReport | None
    rewritten: set[str]
    rewrite_errors: list[str]
    known_failures: list[str]


def finished_summary(run: Finished) -> MiningSummary:
    summary = _validated(
        run.scan, run.command, run.settings, run.head, run.outcome, run.store, run.suite
    )
    drift = run.drift
    return summary.model_copy(
        update={
            "counts": summary.counts.model_copy(
                update={
                    "weak": len(run.review.aside),
                    "drift": len(drift.skipped) if drift else 0,
                }
            ),
            "drift": _drift_record(drift) if drift else None,
            "tasks": [_with_prompt(t, run.review, run.rewritten) for t in summary.tasks],
            "weak_tasks": [
                RejectedTask.of(c, "weak prompt", quality.reason())
                for c, quality in run.review.aside
            ],
            "prompt_rewrite_errors": run.rewrite_errors,
            "test_cmd": run.settings.test_command,
            "known_failures": run.known_failures,
        }
    )


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _validated(
    scan: ScanResult,
    command: DetectedCommand,
    settings: TaskSettings,
    head: HeadCheck | None,
    outcome: ValidationOutcome,
    store: EnvironmentStore,
    suite: Path,
) -> MiningSummary:
    results: tuple[CandidateResult, ...] = outcome.results
    return MiningSummary(
        repo=scan.repo,
        head=scan.head,
        since=scan.since,
        since_description=scan.since_description,
        shallow=scan.shallow,
        created=utc_now(),
        test_cmd=command.command,
        test_cmd_source=command.source,
        setup_cmd=settings.setup_command,
        test_timeout=settings.test_timeout,
        head_check=head.record if head is not None else None,
        head_skips=_head_skips(head),
        counts=MiningCounts(
            commits=scan.counts.commits,
            candidates=scan.counts.candidates,
            skipped=dict(scan.counts.skipped),
            checked=len(results),
            validated=len(outcome.kept),
            rejected=dict(outcome.rejected),
        ),
        # HEAD's check ran beside the candidates': the outcome's time holds both.
        validation_seconds=outcome.seconds,
        tasks=[SummaryTask.of(r.candidate, validated=True, check=r.check) for r in outcome.kept],
        rejected_tasks=[
            RejectedTask.of(r.candidate, r.reason, r.detail)
            for r in results
            if r.reason is not None
        ],
        environments=EnvironmentCounts(
            built=list(store.built),
            reused=store.reused,
            extras=list(head.installed[0]) if head and head.installed else None,
            groups=list(head.installed[1]) if head and head.installed else None,
        ),
        tasks_file=str(suite),
        head_date=scan.head_date,
        next_step=(
            f"harnessdrive estimate {shlex.quote(str(suite))} --harness {NEXT_STEP_VARIANTS}"
            if outcome.kept
            else None
        ),
    )


def _head_skips(head: HeadCheck | None) -> HeadSkips | None:
    skips = head.skips if head is not None else None
    if skips is None:
        return None
    reasons = [
        SkipCount(reason=reason, tests=count, names=list(skips.names(reason)))
        for reason, count in skips.reasons
    ]
    return HeadSkips(skipped=skips.skipped, total=skips.total, reasons=reasons, many=skips.many)


def _drift_record(report: DriftReport) -> DriftRecord:
    return DriftRecord(
        every=report.every,
        samples=[
            DriftSample(commit=s.candidate.commit, passed=s.passed, failing=list(s.failing))
            for s in report.samples
        ],
        ranges=[
            DriftRangeRecord(
                newest=r.newest.commit,
                oldest=r.oldest.commit,
                commits=len(r.candidates),
                failing=list(r.failing),
                samples=r.samples,
            )
            for r in report.ranges
        ],
    )


def _with_prompt(task: SummaryTask, review: Review, rewritten: set[str]) -> SummaryTask:
    quality = review.quality.get(task.id)
    if quality is None:
        return task
    return task.model_copy(
        update={
            "prompt_problems": list(quality.problems),
            "unstated": list(quality.unstated),
            "prompt_rewritten": task.id in rewritten,
        }
    )
