"""An improvement trial's checkpoint state, checked before a resumed attempt trusts it.

The state is read back from a file (possibly carried from another machine) and holds what the
agent left: file paths and contents. Anything that does not fit the shape the protocol writes (a
path outside the repository, a mode the workspace cannot hold, data that is not base64, rounds
that do not parse) makes the whole checkpoint unusable: the attempt starts over from the
baseline instead, and says why, so nothing recorded is trusted half-way.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harnessdrive.errors import HarnessdriveError
from harnessdrive.protocols.improve.evaluator import EvaluatorCall
from harnessdrive.protocols.improve.resume import entry_from, outcome_from
from harnessdrive.workspace.placing import symlink_escapes


class _Saved(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SavedFile(_Saved):
    path: str
    deleted: bool = False
    mode: Literal["100644", "100755", "120000"] | None = None
    data: str | None = None

    @field_validator("path")
    @classmethod
    def _inside(cls, value: str) -> str:
        parts = value.split("/")
        if not value or value.startswith("/") or "\\" in value or "\0" in value:
            raise ValueError(f"not a path inside the repository: {value!r}")
        if any(part in ("", ".", "..", ".git") for part in parts):
            raise ValueError(f"not a path inside the repository: {value!r}")
        return value

    @model_validator(mode="after")
    def _whole(self) -> SavedFile:
        if self.data is None:
            return self
        if self.mode is None or self.deleted:
            raise ValueError(f"{self.path}: content without a mode, or of a deleted file")
        try:
            content = base64.b64decode(self.data, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"{self.path}: content is not base64") from None
        if self.mode == "120000" and symlink_escapes(
            self.path, content.decode("utf-8", "surrogateescape")
        ):
            raise ValueError(f"{self.path}: a link that points outside the repository")
        return self


class SavedState(_Saved):
    gate: str
    samples: list[float]
    files: list[SavedFile]


class CheckpointState(_Saved):
    baseline: list[float] = Field(min_length=1)
    baseline_verdict: dict[str, Any] | None = None
    rounds: list[dict[str, Any]]
    history: list[dict[str, Any]]
    best: SavedState
    last: SavedState | None = None
    evaluator: list[dict[str, Any]] = []


def unusable(state: dict[str, Any], keep_best: bool) -> str | None:
    """Why ``state`` cannot be resumed from; None when every part of it reads back."""
    try:
        checked = CheckpointState.model_validate(state)
        if len(checked.rounds) != len(checked.history) or not checked.history:
            return "its rounds and its history do not match"
        if not keep_best and checked.last is None:
            return "it has no last state to carry over"
        for each in checked.rounds:
            outcome_from(each)
        for entry in checked.history:
            entry_from(entry)
        for call in checked.evaluator:
            EvaluatorCall(call["round"], call["call"], call["value"], call["refused"])
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"{where}: {first['msg']}"
    except (KeyError, TypeError, ValueError, AttributeError, HarnessdriveError) as exc:
        return f"a round does not read back ({type(exc).__name__}: {exc})"
    return None
