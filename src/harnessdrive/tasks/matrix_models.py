"""The file formats of the matrix: a variant's treatment, and a sweep (``[matrix]`` of a
``suite.toml``, or a sweep file of its own). Boundary models: unknown keys are errors."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

TREATMENTS_FOLDER = "treatments"
"""Where a suite keeps its treatments by name: ``<suite>/treatments/<name>/``."""


class TreatmentSpec(BaseModel):
    """An overlay folder copied over the workspace before the agent starts (docs/matrix.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
    """How results name the treatment; with no ``folder``, the suite's ``treatments/<name>``."""
    folder: str | None = None
    """The overlay folder, relative to the suite folder (or absolute); resolved by the plan."""

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, data: Any) -> Any:
        # ``treatment = "terse"`` in a variant table names a folder of the suite.
        return {"name": data} if isinstance(data, str) else data


class MatrixSpec(BaseModel):
    """A sweep: every harness x model x effort x treatment, each treatment beside its control."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    harnesses: tuple[str, ...] = ()
    """Harness names or the names of the suite's variants; empty: the suite's defaults."""
    models: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Models to sweep per harness (``{ codex = ["gpt-5.5", "gpt-5.4"] }``)."""
    efforts: tuple[str, ...] = ()
    """Effort rungs or the portable aliases ``min``, ``mid``, ``max``, swept for each arm."""
    treatments: tuple[str, ...] = ()
    """Treatment names (folders under ``treatments/``) or folder paths; the control always runs."""
    repeat: int | None = Field(default=None, ge=1)
    """Trials per task and arm; the command line's ``--repeat`` wins when given."""
