"""``harnessdrive run`` and ``harnessdrive demo``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from harnessdrive.cli.output import DEFAULT_RESULTS, ResultsOption, stdout
from harnessdrive.cli.progress import progress_for_terminal
from harnessdrive.demo.run import demo_run
from harnessdrive.errors import UserError
from harnessdrive.report.render import render_report
from harnessdrive.report.scoreboard import build_report
from harnessdrive.running.plan import Plan, make_plan
from harnessdrive.running.run import RunOptions, RunSummary, execute
from harnessdrive.running.variants import resolve_variants, split_names
from harnessdrive.sandbox.runner import Network, SandboxKind
from harnessdrive.tasks.loading import load_suite

EXIT_INTERRUPTED = 130

HarnessOption = Annotated[
    list[str] | None,
    typer.Option(
        "--harness",
        "-H",
        help="Harnesses or suite variants to compare, comma-separated (default: the suite's).",
    ),
]
JobsOption = Annotated[int, typer.Option("--jobs", "-j", help="Trials run at the same time.")]
SandboxOption = Annotated[
    str, typer.Option("--sandbox", help="auto | bwrap | none (auto: bwrap when installed).")
]
PricesOption = Annotated[
    list[Path] | None,
    typer.Option("--prices", help="A price override file (TOML, docs/pricing.md); repeatable."),
]
AllowUnpricedOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-unpriced",
        help="Let HARNESS run with a model that has no price; it counts $0, labelled unpriced.",
    ),
]


def run(
    suite: Annotated[Path, typer.Argument(help="A suite folder (suite.toml) or a task folder.")],
    harness: HarnessOption = None,
    repeat: Annotated[int, typer.Option("--repeat", "-n", help="Trials per task and harness.")] = 1,
    jobs: JobsOption = 1,
    results: ResultsOption = DEFAULT_RESULTS,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the agents' workspaces.")] = False,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", help="Agent time limit in seconds (overrides tasks)."),
    ] = None,
    cmd: Annotated[
        list[str] | None,
        typer.Option("--cmd", help="NAME=TEMPLATE: run any CLI as a variant named NAME."),
    ] = None,
    model: Annotated[
        list[str] | None, typer.Option("--model", help="HARNESS=MODEL: pin a model.")
    ] = None,
    sandbox: SandboxOption = "auto",
    network: Annotated[
        str, typer.Option("--network", help="Agents' network: host | loopback | none.")
    ] = "host",
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    max_usd: Annotated[
        float | None,
        typer.Option(
            "--max-usd",
            help="Spend cap in US dollars over every trial in the results folder; "
            "required when a harness spends money.",
        ),
    ] = None,
    allow_unpriced: AllowUnpricedOption = None,
    prices: PricesOption = None,
) -> None:
    """Run harnesses on a suite and print the scoreboard. The same command resumes."""
    loaded = load_suite(suite)
    variants = resolve_variants(loaded, harness or [], commands=cmd or [], models=model or [])
    options = RunOptions(
        results=results.resolve(),
        jobs=_positive(jobs, "--jobs"),
        keep=keep,
        sandbox=_sandbox(sandbox),
        network=_network(network),
        agent_timeout=_timeout(timeout),
        max_usd=max_usd,
        allow_unpriced=frozenset(split_names(allow_unpriced or [])),
        price_files=tuple(prices or ()),
    )
    plan = make_plan(loaded, variants, repeat)
    _execute_and_report(plan, options, json_output)


def demo(
    harness: HarnessOption = None,
    jobs: JobsOption = 2,
    results: ResultsOption = DEFAULT_RESULTS,
    sandbox: SandboxOption = "auto",
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Run the bundled demo suite offline: reference, noop, breaker and tamperer by default.

    Real agent CLIs (claude, codex, gemini, opencode, pi, qwen, aider, mini-swe-agent) named with
    --harness run against a scripted model on 127.0.0.1 that solves each task: no key, no network.
    """
    with demo_run(split_names(harness or []), python=sys.executable) as demo:
        options = RunOptions(
            results=results.resolve(),
            jobs=_positive(jobs, "--jobs"),
            sandbox=_sandbox(sandbox),
            network=demo.network,
            price_records=demo.prices,
        )
        _execute_and_report(demo.plan, options, json_output)


def _execute_and_report(plan: Plan, options: RunOptions, json_output: bool) -> None:
    progress = progress_for_terminal()
    try:
        summary = execute(plan, options, progress)
    finally:
        progress.close()
    report = build_report(
        summary.trials,
        variants=[v.label for v in plan.variants],
        run_id=summary.run_id,
        suite=plan.suite.name,
    )
    console = stdout()
    if json_output:
        print(report.to_json())
    else:
        console.print(render_report(report))
        _footer(console, summary)
    if summary.interrupted:
        console.print(
            "Stopped. Trials in progress were recorded as interrupted; "
            "run the same command again to finish."
        )
        raise typer.Exit(EXIT_INTERRUPTED)


def _footer(console: Console, summary: RunSummary) -> None:
    console.print(f"Results: {summary.results} (run {summary.run_id}, sandbox: {summary.sandbox})")
    if summary.spend:
        console.print(summary.spend)
    console.print(f"Again later: harnessdrive report --results {summary.results}")
    if summary.kept:
        console.print(f"Workspaces kept in {summary.kept}")


def _positive(value: int, flag: str) -> int:
    if value < 1:
        raise UserError(f"{flag} must be at least 1, not {value}")
    return value


def _timeout(value: float | None) -> float | None:
    if value is not None and value <= 0:
        raise UserError(f"--timeout must be more than 0 seconds, not {value:g}")
    return value


def _sandbox(value: str) -> SandboxKind:
    if value == "auto":
        return "auto"
    if value == "bwrap":
        return "bwrap"
    if value == "none":
        return "none"
    raise UserError(f"--sandbox must be auto, bwrap or none, not {value!r}")


def _network(value: str) -> Network:
    if value == "host":
        return "host"
    if value == "loopback":
        return "loopback"
    if value == "none":
        return "none"
    raise UserError(f"--network must be host, loopback or none, not {value!r}")
