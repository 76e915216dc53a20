"""The relay: what a trial on a Ray worker tells its driver while it runs.

A Ray actor on the driver's node holds the events until the driver takes them: the node that
ran the try, each model call its proxy saw (so a try lost with its worker is charged what it
spent, executors/lost_work.py), and each round checkpoint with its files (so the driver, never
the worker, writes the trial folder, on whatever disk it is), and what the trial is doing (its
phase, turns and spend, for the progress line: protocols/phases.py). A worker waits for its
checkpoint to be held before the trial goes on: the driver has it before the trial's result.

Nothing here imports Ray: the executor wraps :class:`TrialRelay` as an actor, and the worker
calls its handle.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harnessdrive.protocols.phases import TrialPhase
from harnessdrive.proxy.observers import observing_calls
from harnessdrive.proxy.traffic import ProxiedCall
from harnessdrive.store.checkpoint import RoundCheckpoint

RELAY_SECONDS = 60.0
"""How long a worker waits for the relay to hold a checkpoint before the trial goes on."""

EventKind = Literal["started", "call", "checkpoint", "phase"]


@dataclass(frozen=True)
class RelayEvent:
    key: str
    """The job's key."""
    attempt: int
    """Which try of the job on the cluster (0 for the first)."""
    kind: EventKind
    node: str = ""
    """The node's id and host, for ``started``."""
    call: ProxiedCall | None = None
    checkpoint: RoundCheckpoint | None = None
    files: bytes = b""
    """The checkpoint's files as a tar archive."""
    phase: TrialPhase | None = None


class TrialRelay:
    """Holds events until the driver takes them (run as a Ray actor)."""

    def __init__(self) -> None:
        self._events: list[RelayEvent] = []

    def post(self, event: RelayEvent) -> None:
        self._events.append(event)

    def take(self) -> list[RelayEvent]:
        events, self._events = self._events, []
        return events


@dataclass(frozen=True)
class RelayedRounds:
    """A job's ``on_round`` on a worker: the checkpoint and its files go to the driver."""

    relay: Any
    key: str
    attempt: int

    def __call__(self, checkpoint: RoundCheckpoint) -> None:
        import ray

        files = pack_folder(checkpoint.files) if checkpoint.files is not None else b""
        shipped = dataclasses.replace(checkpoint, files=None)
        event = RelayEvent(self.key, self.attempt, "checkpoint", checkpoint=shipped, files=files)
        ray.get(self.relay.post.remote(event), timeout=RELAY_SECONDS)


@dataclass(frozen=True)
class RelayedPhases:
    """A job's ``on_phase`` on a worker: each (throttled) phase goes to the driver, unawaited:
    the trial never waits for its progress to be shown."""

    relay: Any
    key: str
    attempt: int

    def __call__(self, phase: TrialPhase) -> None:
        self.relay.post.remote(RelayEvent(self.key, self.attempt, "phase", phase=phase))


def this_node() -> str:
    """The Ray node id of the calling worker process."""
    import ray

    return str(ray.get_runtime_context().get_node_id())


def announce(relay: Any, key: str, attempt: int, node: str) -> None:
    """Tell the driver that the try started, and where (it does not wait for an answer)."""
    relay.post.remote(RelayEvent(key, attempt, "started", node=node))


@contextlib.contextmanager
def relayed_calls(relay: Any, key: str, attempt: int) -> Iterator[None]:
    """While inside, every model call a proxy of this process records goes to the relay."""

    def tell(call: ProxiedCall) -> None:
        import ray

        ray.get(
            relay.post.remote(RelayEvent(key, attempt, "call", call=call)), timeout=RELAY_SECONDS
        )

    with observing_calls(tell):
        yield


def pack_folder(folder: Path) -> bytes:
    """``folder``'s tree as a tar archive, links as links (the receiver refuses them)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        if folder.is_dir():
            for entry in sorted(folder.iterdir()):
                archive.add(entry, arcname=entry.name)
    return buffer.getvalue()


def unpack_into(files: bytes, folder: Path) -> Path:
    """``files`` (from :func:`pack_folder`) unpacked into ``folder``: no links out, no devices."""
    folder.mkdir(parents=True, exist_ok=True)
    if files:
        with tarfile.open(fileobj=io.BytesIO(files), mode="r") as archive:
            archive.extractall(folder, filter="data")
    return folder
