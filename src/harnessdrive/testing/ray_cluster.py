"""A real Ray cluster on 127.0.0.1 for tests and benchmarks: a head that runs nothing and N
worker nodes (needs the ``harnessdrive[ray]`` extra).

Started with ``ray start`` like a real one, on free ports, in a private temp folder, with no
dashboard and no usage statistics, each worker node with its own environment if asked (a
``PATH`` without bubblewrap, say) and its own view of the disk (folders it sees read-only, as a
machine that mounts the driver's disk read-only would), and torn down by killing every
process that names the folder (and their children), so other Ray users of the machine are
never touched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

OBJECT_STORE_BYTES = 100 * 1024 * 1024
RAY = str(Path(sys.executable).with_name("ray"))
START_SECONDS = 300
"""Starting a node takes seconds, but minutes on a loaded machine; past this it will not come."""
STOP_SECONDS = 2


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _node_ports() -> list[str]:
    return [
        "--dashboard-agent-listen-port",
        str(free_port()),
        "--dashboard-agent-grpc-port",
        str(free_port()),
        "--metrics-export-port",
        str(free_port()),
        "--runtime-env-agent-port",
        str(free_port()),
    ]


@dataclass(frozen=True)
class NodeSetup:
    """How one worker node differs from this machine."""

    env: Mapping[str, str] = field(default_factory=dict)
    """Variables set (or replaced) in the node's environment."""
    readonly: tuple[Path, ...] = ()
    """Folders the node sees read-only (in a mount namespace of its own, through bubblewrap)."""


def path_without(program: str, folder: Path) -> str:
    """A ``PATH`` that finds every program of this one but ``program``: links in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not Path(directory).is_dir():
            continue
        for entry in Path(directory).iterdir():
            link = folder / entry.name
            if entry.name != program and not link.exists() and not link.is_symlink():
                with contextlib.suppress(OSError):
                    link.symlink_to(entry)
    return str(folder)


class LocalRayCluster:
    def __init__(
        self, workers: int = 2, cpus_per_worker: int = 1, nodes: Sequence[NodeSetup] = ()
    ) -> None:
        # Ray's socket paths must stay short: a folder right in the temp dir.
        self.cpus_per_worker = cpus_per_worker
        self.folder = Path(tempfile.mkdtemp(prefix="hd-ray-"))
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        # A loaded 2-core machine starts a node slower than Ray's default wait allows.
        self.env = {
            **os.environ,
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_raylet_start_wait_time_s": str(START_SECONDS),
            # A token some earlier Ray program left in ~/.ray turns authentication on for the
            # head but not for the nodes joining it; this private cluster needs none.
            "RAY_AUTH_MODE": os.environ.get("RAY_AUTH_MODE", "disabled"),
        }
        common = [
            "--node-ip-address",
            "127.0.0.1",
            "--disable-usage-stats",
            "--include-log-monitor=false",  # trials' output comes back in their files
            f"--object-store-memory={OBJECT_STORE_BYTES}",
        ]
        try:
            self._start(
                "--head",
                "--port",
                str(self.port),
                "--num-cpus=0",  # the head schedules no trial: only the workers do
                "--include-dashboard=false",
                "--temp-dir",
                str(self.folder),
                *common,
            )
            for number in range(workers):
                setup = nodes[number] if number < len(nodes) else NodeSetup()
                self._start(
                    "--address", self.address, f"--num-cpus={cpus_per_worker}", *common, node=setup
                )
        except BaseException:
            self.stop()
            raise

    def _start(self, *args: str, node: NodeSetup | None = None) -> None:
        node = node or NodeSetup()
        wrapper: list[str] = []
        if node.readonly:
            bwrap = shutil.which("bwrap") or "bwrap"
            wrapper = [bwrap, "--dev-bind", "/", "/"]
            for folder in node.readonly:
                wrapper += ["--ro-bind", str(folder), str(folder)]
            wrapper.append("--")
        done = subprocess.run(
            [*wrapper, RAY, "start", *args, *_node_ports()],
            env={**self.env, **node.env},
            capture_output=True,
            text=True,
            timeout=START_SECONDS,
        )
        if done.returncode != 0:
            raise RuntimeError(f"ray start {' '.join(args)} failed:\n{done.stderr[-2000:]}")

    def processes(self) -> list[psutil.Process]:
        """The cluster's daemons (they all name the folder) and their children."""
        found: dict[int, psutil.Process] = {}
        for proc in psutil.process_iter(["cmdline"]):
            with contextlib.suppress(psutil.Error):
                if str(self.folder) in " ".join(proc.info["cmdline"] or []):
                    found[proc.pid] = proc
                    for child in proc.children(recursive=True):
                        found[child.pid] = child
        return list(found.values())

    def trial_workers(self) -> list[psutil.Process]:
        """Ray worker processes of this cluster (``ray::...``), the ones that run trials."""
        return [
            p
            for p in self.processes()
            if _name(p).startswith("ray::") and "Agent" not in _name(p) and "IDLE" not in _name(p)
        ]

    def stop(self) -> None:
        procs = self.processes()
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                proc.send_signal(signal.SIGTERM)
        # A throwaway cluster: whatever has not ended in a moment is killed, not waited for.
        _, alive = psutil.wait_procs(procs, timeout=STOP_SECONDS)
        for proc in alive:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        psutil.wait_procs(alive, timeout=10)
        shutil.rmtree(self.folder, ignore_errors=True)


def _name(proc: psutil.Process) -> str:
    with contextlib.suppress(psutil.Error):
        return " ".join(proc.cmdline())
    return ""


@contextlib.contextmanager
def local_ray_cluster(workers: int = 2) -> Iterator[LocalRayCluster]:
    cluster = LocalRayCluster(workers)
    try:
        yield cluster
    finally:
        cluster.stop()
