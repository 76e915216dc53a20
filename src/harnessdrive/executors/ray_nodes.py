"""What each node of a Ray cluster can run, checked on the node before any trial goes there.

Before the first trial of a harness is sent, a check runs on every live node that can take
trials, pinned to it: the harnessdrive version against the driver's, the sandbox the run
chose, that harness's CLI and its version, free disk and memory, and which credentials are set
(their names only, never their values). The answers make one table; a trial goes only to a
node whose row says it can run it (node affinity), so a node without bubblewrap or the CLI
never receives one, and a run with no such node refuses the trial with every node's reason.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from dataclasses import dataclass, field

import psutil

from harnessdrive.harnesses.base import Harness
from harnessdrive.trial.job import WorkerSettings

MIN_FREE_DISK = 256 * 1024 * 1024
"""Free bytes in the node's temp folder below which it takes no trial (a workspace, a HOME
and the task's files go there)."""
MIN_FREE_MEMORY = 256 * 1024 * 1024
CREDENTIAL_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN", "_ACCESS_TOKEN")


@dataclass(frozen=True)
class NodeReport:
    """One node's answers for one harness."""

    node_id: str
    host: str
    harness: str
    harness_version: str | None
    problem: str | None
    """Why the node cannot run this harness's trials; None when it can."""
    free_disk: int
    free_memory: int
    credentials: tuple[str, ...] = field(default=())
    """Names of the credential variables set on the node (never their values)."""

    @property
    def label(self) -> str:
        return f"{self.host} ({self.node_id[:8]})"


def check_node(
    node_id: str, harness: Harness, settings: WorkerSettings, driver_version: str
) -> NodeReport:
    """Run on the node itself: can it run ``harness``'s trials as the driver asks?"""
    from harnessdrive.executors.ray_worker import worker_problem

    disk = shutil.disk_usage(tempfile.gettempdir()).free
    memory = psutil.virtual_memory().available
    info = harness.info()
    problem = worker_problem(harness, settings, driver_version)
    if problem is None and disk < MIN_FREE_DISK:
        problem = f"only {disk // 2**20} MiB free in {tempfile.gettempdir()}"
    if problem is None and memory < MIN_FREE_MEMORY:
        problem = f"only {memory // 2**20} MiB of memory available"
    names = sorted(n for n in os.environ if n.endswith(CREDENTIAL_SUFFIXES) and os.environ[n])
    return NodeReport(
        node_id=node_id,
        host=socket.gethostname(),
        harness=harness.name,
        harness_version=info.version,
        problem=problem,
        free_disk=disk,
        free_memory=memory,
        credentials=tuple(names),
    )


def node_table(reports: list[NodeReport]) -> str:
    """The table of what each node can run, one row per node and harness."""
    lines = ["node | harness | version | free disk | free memory | credentials | can run"]
    for report in sorted(reports, key=lambda r: (r.label, r.harness)):
        verdict = "yes" if report.problem is None else f"no: {report.problem}"
        lines.append(
            f"{report.label} | {report.harness} | {report.harness_version or '-'} | "
            f"{report.free_disk // 2**20} MiB | {report.free_memory // 2**20} MiB | "
            f"{', '.join(report.credentials) or '-'} | {verdict}"
        )
    return "\n".join(lines)


def refusal(harness: str, reports: list[NodeReport]) -> str:
    """Why no node can run ``harness``'s trials, naming every node's reason."""
    reasons = "; ".join(f"{r.label}: {r.problem}" for r in reports if r.problem)
    return f"no node of the cluster can run {harness}: {reasons or 'the cluster has no node'}"
