"""Turn ``--harness`` names, ``--cmd`` templates and ``--model`` pins into variants."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.harnesses.registry import available
from harnessdrive.matrix.sweep import expand_matrix, load_sweep
from harnessdrive.tasks.loading import Suite
from harnessdrive.tasks.models import ID_PATTERN, VariantSpec


def split_names(values: Sequence[str]) -> list[str]:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``."""
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def resolve_variants(
    suite: Suite,
    harness_names: Sequence[str],
    *,
    commands: Sequence[str] = (),
    models: Sequence[str] = (),
) -> tuple[VariantSpec, ...]:
    """The variants a run compares.

    A name is a variant named in the suite, a ``--cmd NAME=TEMPLATE`` variant, or a harness.
    Every ``--cmd`` variant runs; with no names and no commands, the suite's defaults do.
    """
    by_label = {v.label: v for v in suite.default_variants}
    for spec in commands:
        name, sep, template = spec.partition("=")
        if not sep or not name.strip() or not template.strip():
            raise UserError(f"--cmd wants NAME=TEMPLATE, got {spec!r}")
        name = name.strip()
        _check_name(name)
        by_label[name] = VariantSpec(harness="command", name=name, options={"template": template})
    # --cmd variants always run; with neither --harness nor --cmd, the suite's defaults do.
    names = split_names(harness_names)
    names += [n for c in commands if (n := c.partition("=")[0].strip()) not in names]
    if not names:
        names = [v.label for v in suite.default_variants]
    pins = _model_pins(models)
    known = available()
    variants = []
    for name in names:
        if name in by_label:
            variant = by_label[name]
        elif name in known or ":" in name:
            variant = VariantSpec(harness=name, name=_label_for(name))
        else:
            choices = sorted({*known, *by_label})
            hint = did_you_mean(name, choices)
            raise UserError(f"unknown harness {name!r}{hint}; known: {', '.join(choices)}")
        if name in pins or variant.harness in pins:
            model = pins.get(name, pins.get(variant.harness))
            variant = variant.model_copy(update={"model": model})
        variants.append(variant)
    unused = sorted(set(pins) - set(names) - {v.harness for v in variants})
    if unused:
        hint = did_you_mean(unused[0], [*names, *(v.harness for v in variants)])
        raise UserError(
            f"--model names a harness that is not in the run: {', '.join(unused)}{hint}"
        )
    return tuple(variants)


def _model_pins(models: Sequence[str]) -> dict[str, str]:
    pins = {}
    for spec in split_names(models):
        harness, sep, model = spec.partition("=")
        if not sep or not harness or not model:
            raise UserError(f"--model wants HARNESS=MODEL, got {spec!r}")
        pins[harness.strip()] = model.strip()
    return pins


def _label_for(harness: str) -> str | None:
    """``pkg.mod:Agent`` -> ``Agent``: a dotted harness still gets a short, folder-safe name."""
    if ":" not in harness:
        return None
    return re.sub(r"[^A-Za-z0-9._-]", "_", harness.rpartition(":")[2]) or None


def _check_name(name: str) -> None:
    if not re.match(ID_PATTERN, name):
        raise UserError(f"variant name {name!r} may hold only letters, digits, '.', '_' and '-'")


def matrix_variants(
    suite: Suite,
    harness_names: Sequence[str],
    *,
    commands: Sequence[str] = (),
    models: Sequence[str] = (),
    efforts: Sequence[str] = (),
    treatments: Sequence[str] = (),
    sweep: Path | None = None,
) -> tuple[tuple[VariantSpec, ...], int | None]:
    """The arms of a run and the sweep's repeat count (None: not set).

    The sweep is the file given, else the suite's ``[matrix]`` when no arm is named; the
    command line's efforts and treatments win over the sweep's.
    """
    spec = load_sweep(sweep) if sweep is not None else None
    if spec is None and not harness_names and not commands:
        spec = suite.spec.matrix
    names = list(harness_names) or list(spec.harnesses if spec else ())
    bases = resolve_variants(suite, names, commands=commands, models=models)
    variants = expand_matrix(
        bases,
        models=dict(spec.models) if spec else None,
        efforts=split_names(efforts) or (spec.efforts if spec else ()),
        treatments=split_names(treatments) or (spec.treatments if spec else ()),
    )
    return variants, spec.repeat if spec else None
