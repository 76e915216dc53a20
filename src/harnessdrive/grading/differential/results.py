"""What a differential grading records beside the score: shrunk counterexamples."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Counterexample(BaseModel):
    """A failing case shrunk to a minimal one on which the candidate still disagrees."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    case: str
    """The frozen case's id."""
    bucket: str
    """The rule bucket the case was frozen in."""
    rules: tuple[str, ...]
    """The rules whose switching-off changes the oracle's answer to the shrunk case: what it
    is a counterexample of (empty: the documented behaviour)."""
    input: Any
    expected: Any
    actual: Any = None
    error: str | None = None
    """Why the candidate gave no answer (an exception, a timeout, a crash)."""
    size_before: int
    size_after: int
    """Items in the case's declared parts before and after shrinking."""
