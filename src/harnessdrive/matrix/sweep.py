"""Expand a sweep into variants: base arms x models x efforts x treatments.

Every treatment runs beside its control: the untreated arm of the same harness, model and
effort is always part of the expansion. Swept arms are named from their base arm's name, the
model (``@model``), the effort as written (``+max``) and the treatment (``+terse``).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from harnessdrive.errors import TaskFormatError, UserError
from harnessdrive.tasks.matrix_models import MatrixSpec, TreatmentSpec
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.tasks.problems import describe_validation_error


def load_sweep(path: Path) -> MatrixSpec:
    """A sweep file (the keys of a suite's ``[matrix]`` table); treatment paths in it are
    made absolute against its folder. Anything wrong is one line naming the file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"sweep file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise TaskFormatError(f"{path}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"{path}: cannot read: {exc}") from None
    try:
        spec = MatrixSpec.model_validate(data)
    except ValidationError as exc:
        raise TaskFormatError(f"{path}: {describe_validation_error(exc, MatrixSpec)}") from None
    folder = path.resolve().parent
    treatments = tuple(
        str(folder / value) if _is_path(value) and not Path(value).is_absolute() else value
        for value in spec.treatments
    )
    return spec.model_copy(update={"treatments": treatments})


def treatment_spec(value: str) -> TreatmentSpec:
    """``terse`` names the suite's ``treatments/terse``; a value with a slash is a folder."""
    if _is_path(value):
        folder = Path(value).expanduser().resolve()
        return TreatmentSpec(name=_safe(folder.name), folder=str(folder))
    try:
        return TreatmentSpec(name=value)
    except ValidationError:
        raise UserError(
            f"treatment {value!r}: a name may hold only letters, digits, '.', '_' and '-' "
            "(or give a folder path)"
        ) from None


def expand_matrix(
    bases: Sequence[VariantSpec],
    *,
    models: dict[str, Sequence[str]] | None = None,
    efforts: Sequence[str] = (),
    treatments: Sequence[str] = (),
) -> tuple[VariantSpec, ...]:
    """Every base arm x its models x ``efforts`` x (control, then each treatment).

    ``models`` maps a harness (or a base arm's name) to the models swept for it; an arm not
    named keeps its own. With nothing swept the bases come back as they are.
    """
    models = models or {}
    specs = [treatment_spec(value) for value in treatments]
    expanded: list[VariantSpec] = []
    for base in bases:
        chosen = models.get(base.label, models.get(base.harness))
        for model_arm in _models(base, chosen):
            for effort_arm in _efforts(model_arm, efforts):
                expanded.append(effort_arm)
                for spec in specs:
                    expanded.append(
                        effort_arm.model_copy(
                            update={
                                "treatment": spec,
                                "name": arm_name(effort_arm.label, spec.name),
                            }
                        )
                    )
    return tuple(expanded)


def _models(base: VariantSpec, models: Sequence[str] | None) -> list[VariantSpec]:
    if not models:
        return [base]
    return [
        base.model_copy(
            update={"model": model, "name": arm_name(base.name, model, "@") if base.name else None}
        )
        for model in models
    ]


def _efforts(arm: VariantSpec, efforts: Sequence[str]) -> list[VariantSpec]:
    if not efforts:
        return [arm]
    return [arm.model_copy(update={"effort": e, "name": arm_name(arm.label, e)}) for e in efforts]


def arm_name(label: str, part: str, joiner: str = "+") -> str:
    """``label`` + ``joiner`` + ``part`` as a variant name: characters a name may not hold
    (a model id's ``/`` or ``:``) become ``_``."""
    return re.sub(r"[^A-Za-z0-9._@+-]", "_", f"{label}{joiner}{part}")[:200]


def _is_path(value: str) -> bool:
    return "/" in value or value.startswith((".", "~"))


def _safe(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "._-" else "_" for c in name).lstrip("._-")
    return cleaned[:100] or "treatment"
