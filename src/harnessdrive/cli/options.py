"""Options shared by several commands, and the checks that turn their text into values."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.sandbox.runner import Network, SandboxKind

DEFAULT_RESULTS = Path(".harnessdrive")

SuiteArgument = Annotated[
    Path,
    typer.Argument(metavar="SUITE", help="A suite folder (suite.toml) or a task folder."),
]
ResultsOption = Annotated[
    Path,
    typer.Option(
        "--results",
        metavar="DIR",
        help="Results folder (default: .harnessdrive/ here).",
        show_default=False,
    ),
]
HarnessOption = Annotated[
    list[str] | None,
    typer.Option(
        "--harness",
        "-H",
        metavar="NAMES",
        help="Harnesses or suite variants to compare, comma-separated (default: the suite's).",
    ),
]
TaskOption = Annotated[
    list[str] | None,
    typer.Option(
        "--task",
        "-t",
        metavar="IDS",
        help="Only these tasks, comma-separated (default: every task).",
    ),
]
CmdOption = Annotated[
    list[str] | None,
    typer.Option(
        "--cmd", metavar="NAME=TEMPLATE", help="Run any CLI as a variant named NAME; repeatable."
    ),
]
ModelOption = Annotated[
    list[str] | None,
    typer.Option("--model", metavar="HARNESS=MODEL", help="Pin a harness's model; repeatable."),
]
RepeatOption = Annotated[
    int, typer.Option("--repeat", "-n", metavar="N", help="Trials per task and harness.")
]
JobsOption = Annotated[
    int, typer.Option("--jobs", "-j", metavar="N", help="How many run at the same time.")
]
SandboxOption = Annotated[
    str,
    typer.Option(
        "--sandbox", metavar="KIND", help="auto | bwrap | none (auto: bwrap when installed)."
    ),
]
PricesOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--prices", metavar="FILE", help="A price override file (docs/pricing.md); repeatable."
    ),
]
AllowUnpricedOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-unpriced",
        metavar="NAMES",
        help="Let these harnesses run with a model that has no price; they count $0, labelled.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def positive(value: int, flag: str) -> int:
    if value < 1:
        raise UserError(f"{flag} must be at least 1, not {value}")
    return value


def timeout(value: float | None) -> float | None:
    if value is not None and value <= 0:
        raise UserError(f"--timeout must be more than 0 seconds, not {value:g}")
    return value


def sandbox_kind(value: str) -> SandboxKind:
    kinds: dict[str, SandboxKind] = {"auto": "auto", "bwrap": "bwrap", "none": "none"}
    if value not in kinds:
        raise UserError(
            f"--sandbox must be auto, bwrap or none, not {value!r}{did_you_mean(value, kinds)}"
        )
    return kinds[value]


def network(value: str) -> Network:
    kinds: dict[str, Network] = {"host": "host", "loopback": "loopback", "none": "none"}
    if value not in kinds:
        raise UserError(
            f"--network must be host, loopback or none, not {value!r}{did_you_mean(value, kinds)}"
        )
    return kinds[value]
