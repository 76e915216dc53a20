"""The matrix made concrete before anything runs: aliases resolved, treatments checked,
controls present."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harnessdrive.harnesses.entry import HarnessEntry
from harnessdrive.harnesses.registry import available, harness_entry
from harnessdrive.matrix.effort import resolve_effort
from harnessdrive.matrix.treatment import check_treatment, load_treatment, treatment_folder
from harnessdrive.tasks.models import VariantSpec


def known_instruction_files(entries: Sequence[HarnessEntry] = ()) -> frozenset[str]:
    """Every registered harness's instruction file names (and those of ``entries``)."""
    registered = [*available().values(), *entries]
    return frozenset(name for entry in registered for name in entry.instruction_files)


def resolve_matrix(variants: Sequence[VariantSpec], suite_folder: Path) -> tuple[VariantSpec, ...]:
    """``variants`` ready to plan: each effort a rung of its harness's ladder, each treatment's
    folder absolute and checked against its harness, and each treated arm preceded by its
    control (the same arm untreated), added when the list lacks it. Bad input is a one-line
    :class:`UserError`, raised before any trial runs or any money is spent."""
    resolved: list[VariantSpec] = []
    for variant in variants:
        entry = harness_entry(variant.harness)
        variant = resolve_effort(variant, entry)
        if variant.treatment is not None:
            spec = variant.treatment
            folder = treatment_folder(spec, suite_folder)
            treatment = load_treatment(spec, suite_folder)
            check_treatment(treatment, entry, known_instruction_files((entry,)))
            variant = variant.model_copy(
                update={"treatment": spec.model_copy(update={"folder": str(folder)})}
            )
        resolved.append(variant)
    with_controls: list[VariantSpec] = []
    for variant in resolved:
        if variant.treatment is not None and not any(
            _is_control_of(other, variant) for other in resolved
        ):
            control = control_of(variant)
            if not any(_same_arm(control, other) for other in with_controls):
                with_controls.append(control)
        with_controls.append(variant)
    return tuple(with_controls)


def control_of(treated: VariantSpec) -> VariantSpec:
    """The untreated arm a treated one is compared with; its name loses the ``+treatment``."""
    assert treated.treatment is not None
    suffix = f"+{treated.treatment.name}"
    name = treated.name
    if name is not None:
        name = name.removesuffix(suffix) if name.endswith(suffix) else f"{name}-control"
    return treated.model_copy(update={"treatment": None, "name": name})


def _same_arm(one: VariantSpec, other: VariantSpec) -> bool:
    fields = ("harness", "model", "effort", "options", "protocol", "treatment")
    return all(getattr(one, field) == getattr(other, field) for field in fields)


def _is_control_of(candidate: VariantSpec, treated: VariantSpec) -> bool:
    return candidate.treatment is None and _same_arm(
        candidate, treated.model_copy(update={"treatment": None})
    )
