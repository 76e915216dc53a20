"""The workload's side of the objective runner's operation counter.

``keys()`` gives the keys the runner holds, in its order, as opaque objects: each ``==``,
``<`` and ``hash`` asks the runner, which answers and counts it. ``report(result)`` hands the
workload's result (keys, lists of them, numbers) back, so the runner can tell a right answer
from a wrong one. Nothing here can set the count: it is the runner's, in another process.
"""

from __future__ import annotations

import json
import os
from typing import Any

FDS_VARIABLE = "HARNESSDRIVE_OBJECTIVE_FDS"
_link: tuple[Any, Any] | None = None
_ids: list[str] = []


def _channel() -> tuple[Any, Any]:
    global _link
    if _link is None:
        asks, answers = (int(fd) for fd in os.environ[FDS_VARIABLE].split(","))
        _link = (os.fdopen(asks, "wb", buffering=0), os.fdopen(answers, "rb"))
        # The runner's first line names its keys: read once, whether they are used or not.
        _ids.extend(_link[1].readline().decode().split())
    return _link


def _ask(request: str) -> str:
    asks, answers = _channel()
    asks.write(f"{request}\n".encode())
    return str(answers.readline().decode().strip())


class Key:
    """One of the runner's keys: its value is known to the runner alone."""

    __slots__ = ("_id",)

    def __init__(self, ident: str) -> None:
        self._id = ident

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Key):
            return NotImplemented
        return _ask(f"e {self._id} {other._id}") == "1"

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Key):
            return NotImplemented
        return _ask(f"l {self._id} {other._id}") == "1"

    def __hash__(self) -> int:
        return int(_ask(f"h {self._id}"))

    def __repr__(self) -> str:
        return f"Key({self._id})"


def keys() -> list[Key]:
    """The runner's keys, in its order."""
    _channel()
    return [Key(ident) for ident in _ids]


def report(result: Any) -> None:
    """Hand the workload's result to the runner: keys, lists of them, numbers."""
    _ask("r " + json.dumps(_plain(result)))


def _plain(found: Any) -> Any:
    if isinstance(found, Key):
        return found._id
    if isinstance(found, list | tuple):
        return [_plain(item) for item in found]
    return found
