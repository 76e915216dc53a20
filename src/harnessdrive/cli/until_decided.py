"""The flags of ``harnessdrive run --until-decided``, checked and turned into decision rules."""

from __future__ import annotations

from typing import Annotated

import typer

from harnessdrive.errors import UserError
from harnessdrive.stats.sequential_design import DecisionSettings

DEFAULT_MAX_REPEATS = 10

UntilDecidedOption = Annotated[
    bool,
    typer.Option(
        "--until-decided",
        help="Run only the trials needed until each pair of arms is decided (better, worse or "
        "equivalent) or the budget is spent; the inference stays valid however often it looks.",
    ),
]
MarginOption = Annotated[
    float | None,
    typer.Option(
        "--margin",
        metavar="POINTS",
        help="With --until-decided: arms within this pass-rate difference (0.1 = 10 points) "
        "are equivalent.",
    ),
]
MaxRepeatsOption = Annotated[
    int | None,
    typer.Option(
        "--max-repeats",
        metavar="N",
        help="With --until-decided: the budget of each pair, in trials worth this many passes "
        f"over the tasks (default {DEFAULT_MAX_REPEATS}).",
    ),
]
ConfidenceOption = Annotated[
    float | None,
    typer.Option(
        "--confidence",
        metavar="LEVEL",
        help="With --until-decided: the chance that every decision is right (default 0.95).",
    ),
]


def decision_settings(
    until_decided: bool,
    *,
    margin: float | None,
    max_repeats: int | None,
    confidence: float | None,
    repeat: int | None,
    arms: int,
) -> DecisionSettings | None:
    """The rules of a run until decided, or None for a fixed run (whose flags are refused)."""
    if not until_decided:
        given = [
            flag
            for flag, value in (
                ("--margin", margin),
                ("--max-repeats", max_repeats),
                ("--confidence", confidence),
            )
            if value is not None
        ]
        if given:
            raise UserError(f"{given[0]} goes with --until-decided")
        return None
    if repeat is not None:
        raise UserError(
            "--until-decided chooses the repeats itself: give --max-repeats, not --repeat"
        )
    if arms < 2:
        raise UserError(f"--until-decided compares arms: name at least two, not {arms}")
    if margin is not None and not 0 < margin < 1:
        raise UserError(f"--margin is a pass-rate difference between 0 and 1, not {margin:g}")
    if confidence is not None and not 0.5 <= confidence < 1:
        raise UserError(f"--confidence lies in [0.5, 1), not {confidence:g}")
    rounds = DEFAULT_MAX_REPEATS if max_repeats is None else max_repeats
    if rounds < 1:
        raise UserError(f"--max-repeats must be at least 1, not {rounds}")
    return DecisionSettings(
        confidence=0.95 if confidence is None else confidence, margin=margin, max_repeats=rounds
    )
