"""Run a plan: one driver that schedules, hands trials to an executor and records results.

Three parts, each in its own module: the schedule decides what runs next (resume, skips, the
spend cap: running/schedule.py); an executor, chosen by name, runs each trial where it likes
(executors/); the recorder writes the store, and only the driver does (running/recording.py).
The same command run again resumes: trials already recorded are not run again.

The driver owns no signals and draws nothing: the front end (the CLI, a pytest plugin) passes
a :class:`Progress` and calls :meth:`RunDriver.stop` when it wants the run to end; running
trials are then recorded as interrupted. Without a front end that handles it, Ctrl-C
(KeyboardInterrupt in the driver's thread) stops the run the same way.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field, replace
from pathlib import Path

from harnessdrive.accounting import PriceBook, PriceRecord
from harnessdrive.accounting.plan_pricing import PlanPricing, price_variants, today
from harnessdrive.accounting.spend_gate import SpendGate
from harnessdrive.accounting.trial_cost import Costing
from harnessdrive.executors.interface import DEFAULT_EXECUTOR, Executor
from harnessdrive.executors.registry import create_executor, executor_entry
from harnessdrive.harnesses.base import Harness
from harnessdrive.running.adaptive import AdaptiveSchedule, check_rules_unchanged
from harnessdrive.running.concurrency import ConcurrencyLimits, Slots
from harnessdrive.running.live_board import LiveBoard
from harnessdrive.running.plan import Plan, run_identity
from harnessdrive.running.progress import Progress, SilentProgress
from harnessdrive.running.recording import ClaimedTrial, Recorder
from harnessdrive.running.sandbox_choice import (
    checked_shows,
    private_paths,
    refuse_unsandboxed,
    runs_foreign_code,
    secret_paths,
)
from harnessdrive.running.schedule import Schedule, is_done
from harnessdrive.sandbox.runner import Network, SandboxKind
from harnessdrive.sandbox.scratch import sweep_stale_scratch
from harnessdrive.stats.sequential_design import DecisionSettings
from harnessdrive.store.folder import check_for_writing
from harnessdrive.store.lock import ResultsLock
from harnessdrive.store.manifest import RunManifest, created_at
from harnessdrive.store.paths import ResultsPaths
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store, utc_now
from harnessdrive.store.trust import TaskTrust
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.trial.job import JobResult, RetryPolicy, TrialJob, TrialSettings, WorkerSettings
from harnessdrive.workspace.tree_size import tasks_footprint

__all__ = ["RunDriver", "RunOptions", "RunSummary", "execute", "is_done"]

WAIT_SECONDS = 0.5
"""How often the driver looks up from waiting on trials to see whether it was stopped."""
STOP_GRACE_SECONDS = 60.0
"""How long a stopped run waits for its running trials to come back before it records them
interrupted and ends; a second stop (another Ctrl-C) ends it at once."""


@dataclass(frozen=True)
class RunOptions:
    results: Path
    jobs: int = 1
    """Trials at once; 0: as many as the executor has free slots (a cluster's free CPUs), one
    on an executor that does not say."""
    keep: bool = False
    sandbox: SandboxKind = "auto"
    network: Network = "host"
    agent_timeout: float | None = None
    python: str = sys.executable
    max_usd: float | None = None
    """The spend cap over every trial in the results folder; required for priced harnesses."""
    allow_unpriced: frozenset[str] = frozenset()
    """Harnesses or variants that may run with a model that has no price (counted $0)."""
    price_files: tuple[Path, ...] = ()
    """Price override files (docs/pricing.md), on top of the bundled records."""
    price_records: tuple[PriceRecord, ...] = ()
    """Price records made in code, as overrides (the demo prices its scripted model at zero)."""
    show: tuple[Path, ...] = ()
    """Extra folders every sandboxed process sees read-only (``--show``)."""
    executor: str = DEFAULT_EXECUTOR
    """Where trials run: a registered executor's name (executors/builtin.py)."""
    hide: tuple[Path, ...] = ()
    """More paths no sandboxed process may see (an eval file and its goldens, say)."""
    address: str | None = None
    """The cluster an executor that runs elsewhere joins (``auto``, ``ray://host:port``)."""
    limits: Mapping[str, int] = field(default_factory=dict)
    """Concurrency limits by harness, variant label or ``provider:NAME``, over the suite's."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """How a trial refused by its provider for load is tried again."""
    retry_failed: bool = False
    """Run again the trials recorded as could not run (machinery failures), not only those
    that never got to run."""
    until_decided: DecisionSettings | None = None
    """Run only the trials the arms' comparisons need until each is decided
    (running/adaptive.py); the plan lists every trial the budget could take."""
    trust: Mapping[str, TaskTrust] | None = None
    """Each task's trust by its audit when the run starts, recorded in the run's manifest so
    later reports leave out the same tasks (store/trust.py); None: not known."""


@dataclass
class RunSummary:
    run_id: str
    results: Path
    trials: list[TrialResult] = field(default_factory=list)
    """The latest result of every trial in the plan, in plan order."""
    already_done: int = 0
    ran: int = 0
    interrupted: bool = False
    skipped_harnesses: dict[str, str] = field(default_factory=dict)
    recovered: list[str] = field(default_factory=list)
    sandbox: str = "none"
    kept: Path | None = None
    spend: str | None = None
    """Counted spend against the cap, in a line, when a cap was set."""
    decisions: list[str] = field(default_factory=list)
    """A run until decided: what was decided, what it took, what a fixed design would have."""


def execute(plan: Plan, options: RunOptions, progress: Progress | None = None) -> RunSummary:
    """Run ``plan`` to the end (or until Ctrl-C); see :class:`RunDriver` to stop it yourself."""
    return RunDriver(plan, options, progress).run()


class RunDriver:
    """One run of a plan. :meth:`run` once; :meth:`stop` from any thread or signal handler."""

    def __init__(self, plan: Plan, options: RunOptions, progress: Progress | None = None) -> None:
        self.plan = plan
        self.options = options
        self.progress = progress or SilentProgress()
        self._stopped = threading.Event()
        self._stopped_at: float | None = None
        self._stops = 0
        self._executor: Executor | None = None

    def _give_up(self) -> bool:
        """Whether to stop waiting for running trials: stopped twice, or for too long."""
        began = self._stopped_at
        return began is not None and (
            self._stops > 1 or time.monotonic() - began > STOP_GRACE_SECONDS
        )

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def stop(self) -> None:
        """End the run: nothing more starts, running trials are recorded as interrupted. A
        second call stops waiting for running trials at once (they are recorded interrupted)."""
        self._stops += 1
        if self._stopped_at is None:
            self._stopped_at = time.monotonic()
        self._stopped.set()
        executor = self._executor
        if executor is not None:
            executor.stop()

    def run(self) -> RunSummary:
        plan, options, progress = self.plan, self.options, self.progress
        executor_entry(options.executor)  # an unknown name stops here, before anything is written
        check_for_writing(options.results)
        refuse_unsandboxed(options.sandbox, plan.harnesses)
        shown = checked_shows(options.show, plan.variants, plan.suite, options.results)
        book = PriceBook.load(options.price_files, extra_records=options.price_records)
        # Unpriced models and a missing cap stop the run here, before anything is touched.
        _plan_pricing(plan, options, book).check(options.max_usd)
        store = Store(options.results)
        summary = RunSummary(run_id=plan.run_id, results=options.results)
        with ResultsLock(store.paths.lock) as lock:
            if lock.took_over_from:
                progress.message(
                    f"Took over the results folder from process {lock.took_over_from}, "
                    "which is no longer running."
                )
            store.sync_index()
            swept = sweep_stale_scratch()
            if swept:
                progress.message(
                    f"Removed {len(swept)} scratch folder(s) left by stopped runs "
                    "(and any process still working in them)."
                )
            if options.until_decided is not None:
                check_rules_unchanged(store, plan, options.until_decided)
            summary.recovered = store.recover_inflight()
            for trial_id in summary.recovered:
                progress.message(f"Recorded {trial_id} as interrupted (its driver was killed).")
            _manifest(store, plan, options, finished=None).write(
                store.paths.run_manifest(plan.run_id)
            )
            pricing = _plan_pricing(plan, options, book, store)
            gate = SpendGate(pricing, store, options.max_usd)
            executor = create_executor(options.executor, _worker_settings(plan, options, shown))
            self._executor = executor
            if self.stopped:
                executor.stop()  # stopped while the executor was being built
            summary.sandbox = executor.sandbox
            if options.jobs == 0:
                options = self.options = _with_free_slots(options, executor, progress)
            recorder = Recorder(store, plan.run_id, executor.sandbox, Costing(pricing, book))
            board = LiveBoard(plan.run_id, store.paths.live)
            schedule: Schedule | None = None
            try:
                slots = _slots(plan, options, pricing)
                schedule = _schedule(plan, store, gate, slots, options)
                self._drive(schedule, recorder, executor, summary, board)
            except BaseException:
                self.stop()  # closing waits for running trials: end them first
                raise
            finally:
                executor.close()
                board.close()
                recorder.close()
                summary.kept = executor.kept
                summary.interrupted = self.stopped
                summary.trials = [r for t in plan.trials if (r := store.recorded(t.trial_id))]
                summary.spend = gate.describe()
                if isinstance(schedule, AdaptiveSchedule):
                    schedule.write(finished=not self.stopped)
                    summary.decisions = schedule.summary()
                used = _manifest(store, plan, options, finished=utc_now(), used=summary.trials)
                used.write(store.paths.run_manifest(plan.run_id))
                store.close()
        return summary

    def _drive(
        self,
        schedule: Schedule,
        recorder: Recorder,
        executor: Executor,
        summary: RunSummary,
        board: LiveBoard,
    ) -> None:
        progress, options = self.progress, self.options
        summary.already_done = schedule.already_done
        total = schedule.total
        if summary.already_done:
            progress.message(
                f"{summary.already_done} of {total} trials already recorded; resuming."
            )
        if isinstance(schedule, AdaptiveSchedule):
            for line in schedule.newly_decided():  # decided before a resume
                progress.message(line)
        number = summary.already_done
        running: dict[Future[JobResult], ClaimedTrial] = {}
        submitted = 0
        while schedule.pending or running:
            while len(running) < options.jobs and not self.stopped:
                step = schedule.next(in_flight=len(running))
                if step is None:
                    break
                harness = self.plan.harnesses[step.trial.variant.harness]
                claimed = recorder.claim(step.trial, harness, budget_usd=step.budget_usd)
                if step.skip:
                    number += 1
                    progress.trial_finished(recorder.skipped(claimed, step.skip), number, total)
                    continue
                progress.trial_started(step.trial, number + 1, total)
                job = self._job(claimed, harness, recorder.costing)
                job = replace(job, on_phase=board.start(claimed.planned.trial_id))
                running[executor.submit(job, priority=(submitted,))] = claimed
                submitted += 1
            if not running:
                break
            try:
                done, _ = wait(running, timeout=WAIT_SECONDS, return_when=FIRST_COMPLETED)
            except KeyboardInterrupt:
                self.stop()  # no front end took the signal: stop like one would
                continue
            if self._give_up():
                # Stopped, and the executor did not hand these back in time (or a second
                # signal came): record them interrupted rather than wait forever.
                for claimed in running.values():
                    number += 1
                    progress.trial_finished(recorder.abandoned(claimed), number, total)
                running.clear()
                break
            for future in done:
                claimed = running.pop(future)
                board.finish(claimed.planned.trial_id)
                try:
                    handed = future.result()
                except Exception as exc:  # the executor failed this trial: its machinery's
                    result = recorder.failed(claimed, exc)
                else:
                    result = recorder.finished(claimed, handed)
                number += 1
                summary.ran += 1
                progress.trial_finished(result, number, total)
                message = schedule.finished(claimed.planned, result)
                if message:
                    progress.message(message)
            shown = board.changed()
            if shown is not None:
                progress.trials_running(shown)
        summary.skipped_harnesses = schedule.skipped_harnesses

    def _job(self, claimed: ClaimedTrial, harness: Harness, costing: Costing) -> TrialJob:
        planned, options = claimed.planned, self.options
        return TrialJob(
            key=claimed.key,
            task=planned.task,
            variant=planned.variant,
            harness=harness,
            identity=claimed.identity,
            protocol=planned.protocol,
            settings=TrialSettings(
                agent_timeout=options.agent_timeout,
                network=options.network,
                budget_usd=claimed.budget_usd,
                costing=costing,
                record_folder=claimed.paths.root,
                retry=options.retry,
            ),
            on_round=Recorder.on_round(claimed),
            resume=claimed.resume,
        )


def _with_free_slots(options: RunOptions, executor: Executor, progress: Progress) -> RunOptions:
    """``options`` with as many jobs as ``executor`` has free slots (one if it does not say)."""
    slots = getattr(executor, "free_slots", None)
    jobs = max(int(slots), 1) if isinstance(slots, int) else 1
    progress.message(
        f"Running {jobs} trial(s) at once: the free slots of the {executor.name} executor."
    )
    return replace(options, jobs=jobs)


def _schedule(
    plan: Plan, store: Store, gate: SpendGate, slots: Slots, options: RunOptions
) -> Schedule:
    if options.until_decided is None:
        return Schedule(plan, store, gate, slots, retry_failed=options.retry_failed)
    # A slot runs two trials of a pair: enough slots at once to keep the workers busy.
    ahead = max(1, options.jobs // 2)
    return AdaptiveSchedule(plan, store, gate, options.until_decided, slots, lookahead=ahead)


def _worker_settings(plan: Plan, options: RunOptions, shown: tuple[Path, ...]) -> WorkerSettings:
    # Each worker adds its own scratch root to what is hidden.
    secrets = [*secret_paths(plan.suite, options.results, options.results), *options.hide]
    hidden = tuple(dict.fromkeys(secrets))
    # Built-in agents write known changes only: their copies may go to a memory file system.
    known = not any(runs_foreign_code(harness) for harness in plan.harnesses.values())
    return WorkerSettings(
        jobs=max(options.jobs, 1),  # 0 (the executor's free slots) is decided by the executor
        sandbox=options.sandbox,
        hidden=hidden,
        private=tuple(private_paths()),
        shown=shown,
        python=options.python,
        keep=options.keep,
        address=options.address,
        log=ResultsPaths(options.results).run_log(plan.run_id),
        footprint=tasks_footprint(plan.suite.tasks, max(options.jobs, 1)) if known else None,
    )


def _slots(plan: Plan, options: RunOptions, pricing: PlanPricing) -> Slots:
    limits = ConcurrencyLimits(plan.suite.spec.concurrency).merged(options.limits)

    def providers(variant: VariantSpec) -> list[str]:
        found = pricing.for_variant(variant)
        if found is None:
            return []
        named = (m.provider or (m.record.provider if m.record else None) for m in found.prices)
        return [str(p) for p in named if p]

    return Slots(limits, providers)


def _plan_pricing(
    plan: Plan, options: RunOptions, book: PriceBook, store: Store | None = None
) -> PlanPricing:
    """Every variant's models, prices and per-trial estimate (from this folder's history when
    ``store`` is given)."""
    return price_variants(
        plan.variants,
        plan.harnesses,
        book,
        on=today(),
        allow_unpriced=options.allow_unpriced,
        history=store.all_latest() if store is not None else (),
    )


def _manifest(
    store: Store,
    plan: Plan,
    options: RunOptions,
    finished: str | None,
    used: list[TrialResult] | None = None,
) -> RunManifest:
    now = utc_now()
    return RunManifest(
        run_id=plan.run_id,
        suite=plan.suite.name,
        suite_folder=str(plan.suite.folder),
        **run_identity(plan.suite),
        variants=plan.variants,
        repeat=plan.repeat,
        jobs=options.jobs,
        created=created_at(store.paths.run_manifest(plan.run_id)) or now,
        updated=now,
        finished=finished,
        trials=tuple(t.trial_id for t in plan.trials),
        attempts={r.trial_id: r.attempt for r in used or ()},
        trust=dict(options.trust) if options.trust is not None else None,
    )
