"""Run a plan: one driver, a results folder it locks, trials on a local pool of workers.

Only this driver thread touches the store; workers run trials and hand back results. The same
command run again resumes: trials already recorded are not run again.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from harnessdrive.accounting import PriceBook, PriceRecord
from harnessdrive.accounting.plan_pricing import PlanPricing, price_variants, today
from harnessdrive.accounting.spend_gate import SpendGate
from harnessdrive.accounting.trial_cost import NO_MODEL, Costing
from harnessdrive.running.plan import Plan, PlannedTrial, run_identity
from harnessdrive.running.progress import Progress, SilentProgress
from harnessdrive.running.reaper import Reaper
from harnessdrive.running.sandbox_choice import (
    checked_shows,
    private_paths,
    refuse_unsandboxed,
    secret_paths,
)
from harnessdrive.running.snapshots import SnapshotCache
from harnessdrive.running.trial import (
    PreparedTrial,
    TrialContext,
    execute_trial,
    prepare_trial,
)
from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import Network, SandboxKind, get_sandbox
from harnessdrive.sandbox.scratch import keep_scratch_root, make_scratch_root, sweep_stale_scratch
from harnessdrive.store.atomic import write_atomic
from harnessdrive.store.folder import check_for_writing
from harnessdrive.store.lock import ResultsLock
from harnessdrive.store.results import TrialResult
from harnessdrive.store.schema import RUN_SCHEMA
from harnessdrive.store.store import Store, utc_now
from harnessdrive.workspace.setup_reuse import SetupStates

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass(frozen=True)
class RunOptions:
    results: Path
    jobs: int = 1
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


def is_done(result: TrialResult | None, trial: PlannedTrial) -> bool:
    """Whether a recorded result stands, so a rerun does not repeat the trial."""
    if result is None or result.task_fingerprint != trial.task.fingerprint:
        return False
    if result.status in ("interrupted", "skipped"):
        return False
    # A harness that never got to work and cost nothing is tried again (seed 000).
    return not (result.status == "could_not_run" and result.cost.charged_usd == 0)


def execute(plan: Plan, options: RunOptions, progress: Progress | None = None) -> RunSummary:
    progress = progress or SilentProgress()
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
        summary.recovered = store.recover_inflight()
        for trial_id in summary.recovered:
            progress.message(f"Recorded {trial_id} as interrupted (its driver was killed).")
        _write_manifest(store, plan, options, finished=None)
        pricing = _plan_pricing(plan, options, book, store)
        gate = SpendGate(pricing, store, options.max_usd)
        scratch_root = make_scratch_root()
        sandbox = get_sandbox(
            options.sandbox,
            hidden=secret_paths(plan.suite, options.results, scratch_root),
            private=private_paths(),
            shown=shown,
        )
        summary.sandbox = sandbox.name
        ctx = TrialContext(
            store=store,
            sandbox=sandbox,
            snapshots=SnapshotCache(scratch_root / "snapshots"),
            scratch_root=scratch_root,
            python=options.python,
            run_id=plan.run_id,
            keep=options.keep,
            network=options.network,
            agent_timeout=options.agent_timeout,
            stop=StopToken(),
            reaper=None if options.keep else Reaper(scratch_root / "trash"),
            costing=Costing(pricing, book),
            setup_states=SetupStates(scratch_root / "setup-states"),
        )
        try:
            with _stop_on_signals(ctx.stop):
                _drive(plan, options, ctx, store, progress, summary, gate)
        finally:
            if ctx.reaper is not None:
                ctx.reaper.close()
            if options.keep:
                keep_scratch_root(scratch_root)
                summary.kept = scratch_root
            else:
                shutil.rmtree(scratch_root, ignore_errors=True)
            summary.interrupted = ctx.stop.stopped
            summary.trials = [r for t in plan.trials if (r := store.recorded(t.trial_id))]
            summary.spend = gate.describe()
            _write_manifest(store, plan, options, finished=utc_now(), used=summary.trials)
            store.close()
    return summary


def _drive(
    plan: Plan,
    options: RunOptions,
    ctx: TrialContext,
    store: Store,
    progress: Progress,
    summary: RunSummary,
    gate: SpendGate,
) -> None:
    todo = []
    for trial in plan.trials:
        if is_done(store.recorded(trial.trial_id), trial):
            summary.already_done += 1
        else:
            todo.append(trial)
    total = len(plan.trials)
    if summary.already_done:
        progress.message(f"{summary.already_done} of {total} trials already recorded; resuming.")
    queue = list(todo)
    number = summary.already_done
    running: dict[Future[TrialResult], PreparedTrial] = {}
    with ThreadPoolExecutor(max_workers=max(options.jobs, 1)) as pool:
        while queue or running:
            while queue and len(running) < options.jobs and not ctx.stop.stopped:
                trial = queue[0]
                spend = gate.before(trial)
                if spend.action == "wait" and running:
                    break  # running trials hold the rest of the cap; one may cost less
                queue.pop(0)
                harness = plan.harnesses[trial.variant.harness]
                skip_reason = summary.skipped_harnesses.get(trial.variant.label) or spend.reason
                prepared = prepare_trial(trial, harness, ctx, budget_usd=spend.budget_usd)
                if skip_reason:
                    number += 1
                    result = prepared.identity.model_copy(
                        update={
                            "status": "skipped",
                            "note": skip_reason,
                            "finished": utc_now(),
                            "cost": NO_MODEL,
                        }
                    )
                    _finish(store, prepared, result, progress, number, total)
                    continue
                gate.started(trial)
                progress.trial_started(trial, number + 1, total)
                running[pool.submit(execute_trial, prepared, harness, ctx)] = prepared
            if not running:
                break
            done, _ = wait(running, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                prepared = running.pop(future)
                result = future.result()
                number += 1
                summary.ran += 1
                _finish(store, prepared, result, progress, number, total)
                gate.finished(prepared.planned)
                if result.status == "could_not_run" and result.agent.hint:
                    label = result.variant_label
                    if label not in summary.skipped_harnesses:
                        summary.skipped_harnesses[label] = result.agent.hint
                        progress.message(
                            f"{label} could not run: {result.agent.hint}. "
                            "Its other trials in this run are skipped."
                        )


def _finish(
    store: Store,
    prepared: PreparedTrial,
    result: TrialResult,
    progress: Progress,
    number: int,
    total: int,
) -> None:
    store.record(result)
    store.clear_inflight(prepared.inflight)
    progress.trial_finished(result, number, total)


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


def _write_manifest(
    store: Store,
    plan: Plan,
    options: RunOptions,
    finished: str | None,
    used: list[TrialResult] | None = None,
) -> None:
    path = store.paths.run_manifest(plan.run_id)
    created = utc_now()
    with contextlib.suppress(OSError, ValueError):
        created = json.loads(path.read_text())["created"]
    manifest = {
        "schema": RUN_SCHEMA,
        "run_id": plan.run_id,
        "suite": plan.suite.name,
        "suite_folder": str(plan.suite.folder),
        **run_identity(plan.suite),
        "variants": [v.model_dump(mode="json", exclude_defaults=True) for v in plan.variants],
        "repeat": plan.repeat,
        "jobs": options.jobs,
        "created": created,
        "updated": utc_now(),
        "finished": finished,
        "trials": [t.trial_id for t in plan.trials],
        # Which attempt of each trial this run counts, so its report never shows a later one.
        "attempts": {r.trial_id: r.attempt for r in used or ()},
    }
    write_atomic(path, json.dumps(manifest, indent=2) + "\n")


@contextlib.contextmanager
def _stop_on_signals(stop: StopToken) -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP stop the agents; their trials are recorded as interrupted."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.stop()

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
