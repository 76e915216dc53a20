"""A variant's effort, checked against its harness's declared ladder and resolved to a rung."""

from __future__ import annotations

from harnessdrive.errors import UserError
from harnessdrive.harnesses.entry import HarnessEntry
from harnessdrive.harnesses.ladder import ALIASES, unknown_rung
from harnessdrive.tasks.models import VariantSpec


def resolve_effort(variant: VariantSpec, entry: HarnessEntry) -> VariantSpec:
    """``variant`` with ``effort`` set to the rung it names on ``entry``'s ladder.

    An alias becomes the harness's own rung (``max`` -> ``xhigh`` for Codex). A harness that
    declares no ladder gets its effort as written, and an alias means nothing to it.
    """
    effort = variant.effort
    if effort is None:
        return variant
    ladder = entry.efforts
    if ladder is None:
        if effort in ALIASES:
            raise UserError(
                f"variant {variant.label}: {entry.name} declares no effort ladder, so "
                f"{effort!r} names no rung of it; give one of its own effort values"
            )
        return variant
    problem = unknown_rung(ladder, effort)
    if problem:
        raise UserError(f"variant {variant.label}: {entry.name} {problem}")
    rung = ladder.resolve(effort)
    return variant if rung == effort else variant.model_copy(update={"effort": rung})
