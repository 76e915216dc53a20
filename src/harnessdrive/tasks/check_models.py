"""The ``[grade.scope]`` and ``[check]`` tables of ``task.toml``.

``[grade.scope]`` names the files a change is about; ``[[check.fixtures]]`` are known changes
with the verdict each must get, which ``harnessdrive check`` grades to prove the grader right.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

FixtureOutcome = Literal["pass", "fail", "tampered"]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScopeSpec(_Spec):
    """The files a change is about; a change elsewhere is an ``out-of-scope`` finding."""

    paths: tuple[str, ...] = Field(min_length=1)
    """Globs (as ``protected``) of the paths the change may touch."""
    on_violation: Literal["report", "tamper"] = "report"
    """``report``: the finding is listed and the tests decide; ``tamper``: the outcome is
    ``tampered``, as for any tampering finding."""


class FixtureSpec(_Spec):
    """A known change and the verdict the grader must give it."""

    name: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
    """How ``check`` names it. Default: the file or folder name without its extension."""
    patch: str | None = None
    """A git-style patch applied from the repository root (relative to the task folder)."""
    overlay: str | None = None
    """A folder whose files are copied over the repository (relative to the task folder)."""
    expect: FixtureOutcome
    """The outcome the grade must give."""
    visible: Literal["pass", "fail"] | None = None
    """What the visible command must give; needs ``grade.visible_command``."""
    findings: tuple[str, ...] = ()
    """Finding codes the verdict must include (``protected-path``, ``out-of-scope``, ...)."""
    min_files: int | None = Field(default=None, ge=0)
    """At least this many files touched by the change."""
    max_files: int | None = Field(default=None, ge=0)
    """At most this many files touched by the change."""
    min_lines: int | None = Field(default=None, ge=0)
    """At least this many lines added plus deleted."""
    max_lines: int | None = Field(default=None, ge=0)
    """At most this many lines added plus deleted."""
    more_lines_than_reference: bool = False
    """The change must add plus delete more lines than the reference solution does."""

    @model_validator(mode="after")
    def _one_source(self) -> FixtureSpec:
        if (self.patch is None) == (self.overlay is None):
            raise ValueError("give exactly one of 'patch' and 'overlay'")
        return self

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        source = (self.patch or self.overlay or "").rstrip("/\\")
        stem = re.split(r"[\\/]", source)[-1]
        return stem.rsplit(".", 1)[0] if "." in stem.lstrip(".") else stem


class CheckSpec(_Spec):
    """What ``harnessdrive check`` runs on this task besides the reference and ``noop``."""

    fixtures: tuple[FixtureSpec, ...] = ()
    """Known changes, each with the verdict it must get."""

    @model_validator(mode="after")
    def _unique_names(self) -> CheckSpec:
        labels = [fixture.label for fixture in self.fixtures]
        twice = sorted({label for label in labels if labels.count(label) > 1})
        if twice:
            raise ValueError(f"fixture names are used twice: {', '.join(twice)} (set 'name')")
        return self
