"""What a plugin registers for a harness through the ``harnessdrive_harnesses`` hook."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from harnessdrive.harnesses.base import Harness
from harnessdrive.harnesses.ladder import EffortLadder
from harnessdrive.harnesses.options import NoOptions


@dataclass(frozen=True)
class HarnessEntry:
    """A harness by name: how to build it and the options its variants may set."""

    name: str
    """The name variants give as ``harness``; unique across every loaded plugin."""
    factory: Callable[[], Harness]
    """Builds the harness (usually its class); called once per run."""
    options: type[BaseModel] = NoOptions
    """The pydantic model of the variant's ``options`` table (``extra="forbid"``)."""
    efforts: EffortLadder | None = None
    """The harness's reasoning-effort ladder. None: not declared, so an ``effort`` is handed to
    the harness as written (its ``check_variant`` judges it) and the aliases mean nothing."""
    instruction_files: tuple[str, ...] = ()
    """File names the agent reads its standing instructions from (``AGENTS.md``,
    ``CLAUDE.md``); a treatment's copies of them reach this harness only (docs/matrix.md)."""
