"""What a plugin registers for a harness through the ``harnessdrive_harnesses`` hook."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from harnessdrive.harnesses.base import Harness
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
