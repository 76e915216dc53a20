"""The Ray executor: each trial a Ray task on some worker of a cluster (``harnessdrive[ray]``).

The driver keeps everything it owns on one machine: the schedule (resume, the spend cap, the
concurrency limits) decides what starts, and only the driver writes the results store. A
trial goes to the cluster as a task of :func:`~harnessdrive.executors.ray_worker.run_shipped`
with its task's files, packed once per task and put in Ray's object store; the worker checks
that it can run it, builds the workspace from those files, runs agent and grading in its own
sandbox, and returns the result with the trial's files as a tar archive, which is unpacked
here into a folder the recorder adopts.

Before the first trial of a harness goes out, every node is checked for it
(executors/ray_nodes.py) and each trial is pinned to a node whose check passed, the least
loaded; a node that cannot run a trial never receives it. While a trial runs, its worker tells
the driver through a relay (executors/ray_relay.py) what its model proxy saw and hands over each
round checkpoint with its files: the driver, never a worker, writes the trial folder. What
each trial is doing (its phase, turns and spend) comes back the same way, for the progress.

Ray's own task retries are off: a worker lost mid-trial comes back as an error, and the trial
is submitted again, to another node when there is one, with the loss kept as a ``worker_lost``
retry event charged what the try spent (executors/lost_work.py); after :data:`LOST_TRIES`
losses it is recorded as a failure of the machinery, charged what its tries spent. Ray is
imported only when this executor is created, and the driver's stop signals stay the driver's.
"""

from __future__ import annotations

import logging
import re
import shutil
import signal
import tempfile
import threading
import time
import uuid
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harnessdrive.errors import HarnessdriveError, UserError
from harnessdrive.executors.lost_work import lost_try_cost
from harnessdrive.executors.node_cache import clean_node
from harnessdrive.executors.ray_messages import send_ray_messages_to
from harnessdrive.executors.ray_nodes import NodeReport, check_node, node_table, refusal
from harnessdrive.executors.ray_relay import RelayEvent, TrialRelay, pack_folder, unpack_into
from harnessdrive.executors.ray_worker import Shipped, harnessdrive_version, run_shipped
from harnessdrive.executors.task_bundle import pack_task
from harnessdrive.harnesses.base import Harness
from harnessdrive.proxy.traffic import ProxiedCall
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.sandbox.scratch import make_scratch_root
from harnessdrive.store.result_cost import Cost
from harnessdrive.store.results import AgentSummary, RetryEvent, RoundRecord, TrialResult
from harnessdrive.store.store import utc_now
from harnessdrive.trial.job import JobResult, TrialJob, WorkerSettings

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
LOST_TRIES = 3
"""Tries of a trial whose worker is lost each time before it counts as a machinery failure."""
POLL_SECONDS = 0.2
STOP_GRACE_SECONDS = 30.0
"""How long a stopped trial has to hand back its interrupted result before its worker process
is killed."""
CHECK_SECONDS = 300.0
"""How long the check of the nodes may take (a node starting a worker process on a loaded
machine is slow)."""
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
log = logging.getLogger(__name__)


@dataclass
class _InFlight:
    job: TrialJob
    """As the driver made it: its ``on_round`` writes the driver's trial folder."""
    future: Future[JobResult]
    lost: list[RetryEvent] = field(default_factory=list)
    costs: list[Cost] = field(default_factory=list)
    """What each lost try was charged."""
    attempt: int = 0
    node: str = ""
    """The node id the current try was sent to."""
    tried: set[str] = field(default_factory=set)
    calls: list[ProxiedCall] = field(default_factory=list)
    """The current try's model calls, as its proxy relayed them."""


class RayExecutor:
    """Trials as Ray tasks; see :class:`harnessdrive.executors.interface.Executor`."""

    name = "ray"

    def __init__(
        self, settings: WorkerSettings, *, driver_version: str | None = None, cpus: float = 1
    ) -> None:
        try:
            import ray
        except ImportError:
            raise UserError("the ray executor needs Ray: pip install 'harnessdrive[ray]'") from None
        self._ray: Any = ray
        # "auto" is decided here, once, so every worker runs the same sandbox (or refuses).
        kind = get_sandbox(settings.sandbox).name
        self._sandbox = kind
        self._settings = replace(settings, sandbox="bwrap" if kind == "bwrap" else "none")
        self._version = driver_version or harnessdrive_version()
        self._owns = not ray.is_initialized()
        if self._owns:
            _join(ray, settings.address)
        if settings.log is not None:
            send_ray_messages_to(settings.log)
        self._cpus = cpus
        self._remote = ray.remote(num_cpus=cpus, max_retries=0)(run_shipped)
        self._check = ray.remote(num_cpus=0, max_retries=0)(check_node)
        self._relay = self._start_relay()
        self._run = uuid.uuid4().hex[:12]
        self._clean = ray.remote(num_cpus=0, max_retries=0)(clean_node)
        self._files = make_scratch_root(settings.scratch_prefix)
        self._archives: dict[str, Any] = {}
        self._in_flight: dict[Any, _InFlight] = {}
        self._by_key: dict[str, _InFlight] = {}
        self._reports: dict[str, list[NodeReport]] = {}
        self._labels: dict[str, str] = {}
        self._load: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._wake = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._collect, name="harnessdrive-ray", daemon=True)
        self._thread.start()

    @property
    def sandbox(self) -> str:
        return self._sandbox

    @property
    def kept(self) -> Path | None:
        return None  # kept workspaces stay on the workers' disks

    @property
    def free_slots(self) -> int:
        """Trials the cluster could start now: its free CPUs over each trial's."""
        free = float(self._ray.available_resources().get("CPU", 0))
        return max(int(free // self._cpus), 1)

    @property
    def reports(self) -> list[NodeReport]:
        """Every node's answers so far, for every harness checked."""
        return [r for reports in self._reports.values() for r in reports]

    def describe_nodes(self) -> str:
        """The table of what each node can run."""
        return node_table(self.reports)

    def submit(self, job: TrialJob, *, priority: tuple[int, ...] = ()) -> Future[JobResult]:
        # Ray starts tasks in the order they come; the driver submits in priority order.
        future: Future[JobResult] = Future()
        with self._lock:
            if self._closed:
                raise HarnessdriveError(f"the {self.name} executor is closed; {job.key} not run")
        self._checked(job.harness)
        flight = _InFlight(job, future)
        with self._lock:
            self._by_key[job.key] = flight
        self._send(flight)
        return future

    def stop(self) -> None:
        # Only an event: this may run in a signal handler. The collecting thread cancels.
        self._stopping.set()

    def cancel(self, future: Future[JobResult]) -> None:
        if future.done():
            return
        with self._lock:
            refs = [ref for ref, flight in self._in_flight.items() if flight.future is future]
        for ref in refs:  # a stop the trial answers (interrupted, with its files)
            self._ray.cancel(ref, force=False)

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._wake.set()
        self._thread.join()
        shutil.rmtree(self._files, ignore_errors=True)
        self._clean_nodes()
        if self._relay is not None:
            self._ray.kill(self._relay)
        if self._owns:
            self._ray.shutdown()

    # Nodes -------------------------------------------------------------------------------

    def _clean_nodes(self) -> None:
        """Remove what the run left on every live node: its worker processes' scratch roots
        and the node's shared folder (and roots of processes that died)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        refs = [
            self._clean.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)
            ).remote(self._run)
            for node in self._live_nodes()
        ]
        for ref in refs:
            try:
                self._ray.get(ref, timeout=CHECK_SECONDS)
            except self._ray.exceptions.RayError as exc:
                log.warning("a node could not be cleaned: %s", _first_line(exc))

    def _live_nodes(self) -> dict[str, float]:
        """Live nodes that take trials, with their CPUs."""
        found: dict[str, float] = {}
        for node in self._ray.nodes():
            cpus = float(node.get("Resources", {}).get("CPU", 0))
            if node.get("Alive") and cpus >= self._cpus:
                found[node["NodeID"]] = cpus
        return found

    def _checked(self, harness: Harness) -> list[NodeReport]:
        """Every live node's answer for ``harness``, checking the nodes the first time."""
        found = self._reports.get(harness.name)
        if found is not None:
            return found
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        refs = [
            self._check.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)
            ).remote(node, harness, self._settings, self._version)
            for node in self._live_nodes()
        ]
        reports: list[NodeReport] = []
        for ref in refs:
            try:
                reports.append(self._ray.get(ref, timeout=CHECK_SECONDS))
            except self._ray.exceptions.RayError as exc:  # a node lost while checked
                log.warning("a node could not be checked: %s", _first_line(exc))
        for report in reports:
            self._labels[report.node_id] = report.label
        self._reports[harness.name] = reports
        log.info("what each node can run:\n%s", node_table(reports))
        return reports

    def _choose(self, flight: _InFlight) -> tuple[str, bool] | None:
        """Where the flight's trial goes: ``("", _)`` anywhere Ray likes, when every node can
        run it; else a node that can, the least loaded, and whether it must (a node that
        cannot run it never gets it; one the trial was lost on is only avoided). None when
        no node can run it."""
        live = self._live_nodes()
        able = [
            r.node_id
            for r in self._reports[flight.job.harness.name]
            if r.problem is None and r.node_id in live
        ]
        if not able:
            return None
        everywhere = set(able) == set(live)
        fresh = [node for node in able if node not in flight.tried]
        if everywhere and (not flight.tried or not fresh):
            return "", False
        candidates = fresh or able
        with self._lock:
            node = min(candidates, key=lambda n: (self._load.get(n, 0) / live[n], n))
        return node, not everywhere

    # Sending and collecting ---------------------------------------------------------------

    def _send(self, flight: _InFlight) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        job = flight.job
        chosen = self._choose(flight)
        if chosen is None:
            problem = refusal(job.harness.name, self._reports[job.harness.name])
            self._answer(flight, _refused(job, problem))
            return
        node, must = chosen
        archive = self._archives.get(job.task.fingerprint)
        if archive is None:
            archive = self._ray.put(pack_task(job.task))
            self._archives[job.task.fingerprint] = archive
        resume_files = b""
        shipped_job = replace(job, on_round=None, on_phase=None)
        if job.resume is not None:
            if job.resume.files is not None:
                resume_files = pack_folder(job.resume.files)
            shipped_job = replace(shipped_job, resume=replace(job.resume, files=None))
        flight.node, flight.calls = node, []
        remote = self._remote
        if node:
            strategy = NodeAffinitySchedulingStrategy(node, soft=not must)
            remote = remote.options(scheduling_strategy=strategy)
        ref = remote.remote(
            shipped_job,
            archive,
            self._settings,
            self._version,
            self._relay,
            flight.attempt,
            resume_files,
            self._run,
            job.on_phase is not None,
        )
        with self._lock:
            self._in_flight[ref] = flight
            self._load[node] = self._load.get(node, 0) + 1
        self._wake.set()

    def _collect(self) -> None:
        ray = self._ray
        cancelled: set[Any] = set()
        killed: set[Any] = set()
        stopped_at: float | None = None
        while True:
            with self._lock:
                refs = list(self._in_flight)
                if not refs and self._closed:
                    return
            if self._stopping.is_set():
                stopped_at = stopped_at or time.monotonic()
                forced = time.monotonic() - stopped_at > STOP_GRACE_SECONDS
                for ref in refs:
                    if ref not in cancelled or (forced and ref not in killed):
                        # First as a stop the trial answers (interrupted, with its files);
                        # a worker that does not answer in time loses its process.
                        ray.cancel(ref, force=forced)
                        (killed if forced else cancelled).add(ref)
            if not refs:
                self._wake.wait(POLL_SECONDS)
                self._wake.clear()
                continue
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=POLL_SECONDS)
            self._drain()  # a checkpoint relayed before its trial ended is written first
            for ref in ready:
                with self._lock:
                    flight = self._in_flight.pop(ref)
                    self._load[flight.node] = self._load.get(flight.node, 0) - 1
                self._settle(flight, ref)

    def _start_relay(self) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        ray = self._ray
        actor = ray.remote(num_cpus=0, max_restarts=0)(TrialRelay)
        try:  # beside the driver, so a lost worker node does not take the relay with it
            here = ray.get_runtime_context().get_node_id()
            actor = actor.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=True)
            )
        except Exception:  # a Ray Client driver is on no node: anywhere will do
            pass
        return actor.remote()

    def _drain(self) -> None:
        """Take what the workers relayed: model calls kept per try, checkpoints written."""
        try:
            events: list[RelayEvent] = self._ray.get(self._relay.take.remote(), timeout=60)
        except self._ray.exceptions.RayError as exc:
            log.warning("the relay did not answer: %s", _first_line(exc))
            return
        for event in events:
            with self._lock:
                flight = self._by_key.get(event.key)
            if flight is None or event.attempt != flight.attempt:
                continue
            if event.kind == "started":
                self._moved(flight, event.node)
            elif event.kind == "call" and event.call is not None:
                flight.calls.append(event.call)
            elif event.kind == "checkpoint" and event.checkpoint is not None:
                self._write_checkpoint(flight, event)
            elif event.kind == "phase" and event.phase and flight.job.on_phase is not None:
                flight.job.on_phase(event.phase)

    def _moved(self, flight: _InFlight, node: str) -> None:
        """The try runs on ``node`` (Ray chose it, or the chosen one)."""
        if node and node != flight.node:
            with self._lock:
                self._load[flight.node] = self._load.get(flight.node, 0) - 1
                self._load[node] = self._load.get(node, 0) + 1
            flight.node = node

    def _write_checkpoint(self, flight: _InFlight, event: RelayEvent) -> None:
        on_round = flight.job.on_round
        if on_round is None or event.checkpoint is None:
            return
        folder = unpack_into(event.files, Path(tempfile.mkdtemp(dir=self._files)))
        try:
            on_round(replace(event.checkpoint, files=folder))
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _settle(self, flight: _InFlight, ref: Any) -> None:
        exceptions = self._ray.exceptions
        job = flight.job
        try:
            shipped: Shipped = self._ray.get(ref)
        except exceptions.TaskCancelledError:
            self._answer(flight, self._cut_off(flight))
            return
        except exceptions.RayTaskError as exc:  # raised in the worker: not a lost worker
            if self._stopping.is_set():  # the stop reached it outside the trial
                self._answer(flight, self._cut_off(flight))
            else:
                self._answer(flight, _machinery_failure(job, flight, _cause(exc)))
            return
        except exceptions.RayError as exc:  # the worker process or its node is gone
            if self._stopping.is_set():
                self._answer(flight, self._cut_off(flight))
                return
            self._retry(flight, "worker_lost", _first_line(exc))
            return
        self._moved(flight, shipped.node_id)
        if shipped.refused is not None and not self._stopping.is_set():
            # The node passed its check but refuses now (its CLI removed, say): not again.
            for report in self._reports.get(job.harness.name, []):
                if report.node_id == flight.node:
                    index = self._reports[job.harness.name].index(report)
                    self._reports[job.harness.name][index] = replace(
                        report, problem=shipped.refused
                    )
            self._retry(flight, "node_refused", shipped.refused)
            return
        self._finish(flight, shipped.result, self._unpack(shipped.files))

    def _retry(self, flight: _InFlight, reason: str, detail: str) -> None:
        """The try is lost: charge what it spent, then run it again elsewhere or give up."""
        job = flight.job
        cost = (
            lost_try_cost(
                job.settings.costing, job.variant, job.harness, flight.calls, job.identity.started
            )
            if reason == "worker_lost"
            else Cost(usd=0.0, source="none")
        )
        flight.costs.append(cost)
        flight.lost.append(
            RetryEvent(
                reason="worker_lost" if reason == "worker_lost" else "node_refused",
                detail=f"{detail}; charged ${cost.charged_usd:.6f}: {cost.note or cost.source}",
                at=utc_now(),
                node=self._label(flight.node),
                charged_usd=cost.charged_usd,
            )
        )
        flight.tried.add(flight.node)
        flight.attempt += 1
        if len(flight.lost) < LOST_TRIES:
            self._send(flight)
        else:
            self._answer(flight, _machinery_failure(job, flight))

    def _cut_off(self, flight: _InFlight) -> TrialResult:
        """The trial stopped before its worker handed it back: interrupted, charged what the
        relay saw it spend (the high estimate when it saw nothing)."""
        job = flight.job
        cost = lost_try_cost(
            job.settings.costing, job.variant, job.harness, flight.calls, job.identity.started
        )
        return job.identity.revised(finished=utc_now(), cost=cost)

    def _label(self, node: str) -> str:
        return self._labels.get(node, node[:8])

    def _finish(self, flight: _InFlight, result: TrialResult, files: Path) -> None:
        with self._lock:
            self._by_key.pop(flight.job.key, None)
        update: dict[str, object] = {"node": self._label(flight.node) if flight.node else None}
        if flight.lost:
            update["retries"] = (*flight.lost, *result.retries)
            earlier = round(sum(cost.charged_usd for cost in flight.costs), 6)
            if earlier:
                cost = result.cost
                note = f"includes ${earlier:.6f} charged for tries lost with their worker"
                update["cost"] = cost.model_copy(
                    update={
                        "charged_usd": round(cost.charged_usd + earlier, 6),
                        "note": f"{cost.note}; {note}" if cost.note else note,
                    }
                )
        flight.future.set_result(JobResult(result.revised(**update), files))

    def _answer(self, flight: _InFlight, result: TrialResult) -> None:
        self._finish(flight, result, self._unpack(b""))

    def _unpack(self, files: bytes) -> Path:
        # What a worker sends sat next to an agent's work: no links out, no devices.
        return unpack_into(files, Path(tempfile.mkdtemp(dir=self._files)))


_CLIENT_TRIES = 3
_SERVER_FAILED = "Initialization failure from server"


def _join(ray: Any, address: str | None) -> None:
    """Join the cluster, keeping the driver's own stop signals: Ray's SIGTERM handler would
    end the process without the results being written."""
    main = threading.current_thread() is threading.main_thread()
    kept = {sig: signal.getsignal(sig) for sig in _STOP_SIGNALS} if main else {}
    try:
        for attempt in range(1, _CLIENT_TRIES + 1):
            try:
                ray.init(
                    address=address,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.WARNING,
                )
                return
            except (ConnectionError, ValueError, RuntimeError) as exc:
                # A Ray Client head reached, whose server process for this driver failed to
                # start (a race in Ray's proxy, seen on busy heads), is worth another try.
                if attempt < _CLIENT_TRIES and _SERVER_FAILED in str(exc):
                    continue
                where = address or "a new local cluster"
                raise UserError(f"cannot join the Ray cluster at {where}: {exc}") from None
    finally:
        for sig, handler in kept.items():
            if handler is not None:
                signal.signal(sig, handler)


def _cause(exc: Any) -> str:
    """What went wrong in the worker (a RayTaskError's first line only names the task)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return f"{type(cause).__name__}: {_first_line(cause)}"
    return _first_line(exc)


def _first_line(exc: BaseException) -> str:
    text = _ANSI.sub("", str(exc)).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def _refused(job: TrialJob, problem: str) -> TrialResult:
    hint = f"the cluster refused it: {problem}; install what it lacks on the nodes"
    return job.identity.revised(
        status="could_not_run",
        finished=utc_now(),
        rounds=(RoundRecord(status="could_not_run", agent=AgentSummary(error=problem, hint=hint)),),
        cost=Cost(usd=0.0, source="none"),
        note=f"refused: no node has what it needs ({problem}); nothing ran",
    )


def _machinery_failure(job: TrialJob, flight: _InFlight, error: str | None = None) -> TrialResult:
    """A trial the machinery failed: charged what its lost tries spent, never more."""
    error = error or f"the Ray worker running it was lost {len(flight.lost)} times"
    spent = round(sum(cost.charged_usd for cost in flight.costs), 6)
    note = f"charged ${spent:.6f} for what its tries spent before they were lost"
    cost = (flight.costs[-1] if flight.costs else Cost(usd=0.0, source="none")).model_copy(
        update={"charged_usd": spent, "note": note}
    )
    return job.identity.revised(
        status="could_not_run",
        finished=utc_now(),
        rounds=(RoundRecord(status="could_not_run", agent=AgentSummary(error=error)),),
        cost=cost,
        note=f"an infrastructure failure ({error}); not counted against the harness",
    )
