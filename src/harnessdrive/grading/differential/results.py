"""What a differential grading records beside the score: shrunk counterexamples."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, TypeAdapter, ValidationError

KEPT_CHARS = 2000
"""Characters of an input's or answer's JSON a stored counterexample keeps; the rest is
described by its digest, so a candidate's huge answers never fill the results folder."""
Part = Literal["input", "expected", "actual"]
DETAILS_KEY = "counterexamples"
"""Where a differential verdict's ``details`` hold its counterexamples."""


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
    digests: dict[str, str] = {}
    """``sha256:`` of the canonical JSON of each part (``input``, ``expected``, ``actual``);
    empty in results stored before it was recorded."""
    cut: tuple[Part, ...] = ()
    """The parts kept only as an excerpt of their JSON text (head and tail, with a note)."""

    @classmethod
    def bounded(cls, *, input: Any, expected: Any, actual: Any, **fields: Any) -> Counterexample:
        """A counterexample whose input and answers are kept whole up to :data:`KEPT_CHARS` of
        JSON each, and as an excerpt beyond; every part is named by its digest."""
        kept: dict[str, Any] = {}
        digests: dict[str, str] = {}
        cut: list[Part] = []
        parts: tuple[tuple[Part, Any], ...] = (
            ("input", input),
            ("expected", expected),
            ("actual", actual),
        )
        for name, value in parts:
            text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            digests[name] = "sha256:" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()
            if len(text) > KEPT_CHARS:
                half = KEPT_CHARS // 2
                value = f"{text[:half]} ...[{len(text) - 2 * half} characters]... {text[-half:]}"
                cut.append(name)
            kept[name] = value
        return cls(**fields, **kept, digests=digests, cut=tuple(cut))


_EXAMPLES = TypeAdapter(tuple[Counterexample, ...])


def as_details(examples: tuple[Counterexample, ...]) -> dict[str, JsonValue]:
    """A differential verdict's ``details``: its counterexamples as plain JSON."""
    return {DETAILS_KEY: [example.model_dump(mode="json") for example in examples]}


def counterexamples_in(details: dict[str, JsonValue]) -> tuple[Counterexample, ...]:
    """The counterexamples a differential verdict's ``details`` hold; none when they hold
    none or what they hold is not counterexamples (another kind's data, a damaged file)."""
    try:
        return _EXAMPLES.validate_python(details.get(DETAILS_KEY) or ())
    except ValidationError:
        return ()
