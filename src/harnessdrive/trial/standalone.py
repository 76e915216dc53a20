"""Jobs made outside a run: a check case, a mining validation, a test.

A run's jobs come from its driver (running/run.py), with a trial folder claimed in the store.
Anything else that wants a trial graded the same way builds one here and reads its
:class:`~harnessdrive.trial.job.JobResult` itself.
"""

from __future__ import annotations

from harnessdrive.harnesses.base import Harness
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import utc_now
from harnessdrive.tasks.loading import Task
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.trial.job import TrialJob, TrialSettings


def standalone_job(
    task: Task,
    harness: Harness,
    *,
    key: str,
    suite: str = "",
    variant: VariantSpec | None = None,
    protocol: str | None = None,
    settings: TrialSettings | None = None,
) -> TrialJob:
    """A job for ``task`` run by ``harness``, named ``key`` (its trial id in the result)."""
    variant = variant or VariantSpec(harness=harness.name)
    started = utc_now()
    identity = TrialResult(
        trial_id=key,
        suite=suite,
        task=task.id,
        task_title=task.spec.title,
        task_fingerprint=task.fingerprint,
        variant=variant,
        variant_label=variant.label,
        harness=variant.harness,
        repetition=1,
        status="interrupted",
        outcome="not_graded",
        started=started,
        finished=started,
        note="stopped before this trial finished",
    )
    return TrialJob(
        key=key,
        task=task,
        variant=variant,
        harness=harness,
        identity=identity,
        protocol=protocol or variant.protocol or task.spec.protocol,
        settings=settings or TrialSettings(),
    )
