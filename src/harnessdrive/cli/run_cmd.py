"""``harnessdrive run`` and ``harnessdrive demo``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from harnessdrive.audit.counting import counted_suite
from harnessdrive.audit.trust_record import suite_trust
from harnessdrive.cli import options as opt
from harnessdrive.cli.output import stdout
from harnessdrive.cli.progress import progress_for_terminal
from harnessdrive.cli.signals import stop_on_signals
from harnessdrive.cli.until_decided import (
    ConfidenceOption,
    MarginOption,
    MaxRepeatsOption,
    UntilDecidedOption,
    decision_settings,
)
from harnessdrive.cli.variants import matrix_variants, resolve_variants, split_names
from harnessdrive.harbor.direct import suite_folder
from harnessdrive.report.left_out import left_out_note
from harnessdrive.report.render import render_report
from harnessdrive.report.scoreboard import build_report
from harnessdrive.report.trust_counting import count_trusted
from harnessdrive.running.concurrency import parse_limit
from harnessdrive.running.never_ran import harnesses_that_never_ran
from harnessdrive.running.not_run import machinery_failures
from harnessdrive.running.plan import Plan, make_plan
from harnessdrive.running.run import RunDriver, RunOptions, RunSummary
from harnessdrive.stats.sequential_design import repeats_needed
from harnessdrive.store.trust import trial_trust
from harnessdrive.tasks.loading import load_suite

EXIT_INTERRUPTED = 130
EXIT_NEVER_RAN = 1


def run(
    suite: opt.SuiteArgument,
    harness: opt.HarnessOption = None,
    repeat: Annotated[
        int | None,
        typer.Option(
            "--repeat",
            "-n",
            metavar="N",
            help="Trials per task and arm (default: the sweep's, or 1).",
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            metavar="N",
            help="How many run at the same time (default: 1; with --executor ray, the "
            "cluster's free slots).",
        ),
    ] = None,
    results: opt.ResultsOption = opt.DEFAULT_RESULTS,
    effort: Annotated[
        list[str] | None,
        typer.Option(
            "--effort",
            metavar="RUNGS",
            help="Efforts to sweep, comma-separated: a harness's own rungs or min, mid, max.",
        ),
    ] = None,
    treatment: Annotated[
        list[str] | None,
        typer.Option(
            "--treatment",
            metavar="NAMES",
            help="Treatments to sweep beside their control: names under the suite's treatments/ "
            "or folder paths; comma-separated.",
        ),
    ] = None,
    sweep: Annotated[
        Path | None,
        typer.Option("--sweep", metavar="FILE", help="A sweep file (docs/matrix.md)."),
    ] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the agents' workspaces.")] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", metavar="SECONDS", help="Agent time limit (overrides the tasks')."
        ),
    ] = None,
    cmd: opt.CmdOption = None,
    model: opt.ModelOption = None,
    sandbox: opt.SandboxOption = "auto",
    network: Annotated[
        str,
        typer.Option("--network", metavar="KIND", help="Agents' network: host | loopback | none."),
    ] = "host",
    json_output: opt.JsonOption = False,
    all_tasks: Annotated[
        bool,
        typer.Option(
            "--all-tasks",
            help="Count tasks the audit (check --audit) marked untrusted or invalid; by default "
            "the scoreboard leaves them out and says so, and --until-decided does not run them.",
        ),
    ] = False,
    max_usd: Annotated[
        float | None,
        typer.Option(
            "--max-usd",
            metavar="USD",
            help="Spend cap over every trial in the results folder; required when a harness "
            "spends money.",
        ),
    ] = None,
    allow_unpriced: opt.AllowUnpricedOption = None,
    prices: opt.PricesOption = None,
    show: Annotated[
        list[Path] | None,
        typer.Option(
            "--show",
            metavar="PATH",
            help="Show this folder read-only inside every sandbox (a script under /tmp, say); "
            "repeatable.",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            metavar="NAME",
            help="Where trials run: local (this machine) or ray (a Ray cluster, with the "
            "harnessdrive[ray] extra).",
        ),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(
            "--address",
            metavar="ADDRESS",
            help="The cluster to join with --executor ray: auto or ray://host:port.",
        ),
    ] = None,
    limit: Annotated[
        list[str] | None,
        typer.Option(
            "--limit",
            metavar="NAME=N",
            help="At most N trials at once of a harness, a variant or provider:NAME, whatever "
            "--jobs says; repeatable.",
        ),
    ] = None,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="Run again the trials recorded as could not run (lost workers, other "
            "failures of the machinery).",
        ),
    ] = False,
    until_decided: UntilDecidedOption = False,
    margin: MarginOption = None,
    max_repeats: MaxRepeatsOption = None,
    confidence: ConfidenceOption = None,
) -> None:
    """Run harnesses on a suite and print the scoreboard. The same command resumes."""
    # A Harbor task or dataset runs as the suite imported from it (docs/harbor.md).
    loaded = load_suite(suite_folder(suite, lambda line: typer.echo(line, err=True)))
    variants, sweep_repeat = matrix_variants(
        loaded,
        harness or [],
        commands=cmd or [],
        models=model or [],
        efforts=effort or [],
        treatments=treatment or [],
        sweep=sweep,
    )
    rules = decision_settings(
        until_decided,
        margin=margin,
        max_repeats=max_repeats,
        confidence=confidence,
        repeat=repeat,
        arms=len(variants),
    )
    options = RunOptions(
        results=results.resolve(),
        jobs=opt.positive(jobs, "--jobs") if jobs is not None else (0 if executor == "ray" else 1),
        keep=keep,
        sandbox=opt.sandbox_kind(sandbox),
        network=opt.network(network),
        agent_timeout=opt.timeout(timeout),
        max_usd=max_usd,
        allow_unpriced=frozenset(split_names(allow_unpriced or [])),
        price_files=tuple(prices or ()),
        show=tuple(show or ()),
        executor=executor,
        address=address,
        limits=dict(parse_limit(each) for each in limit or ()),
        retry_failed=retry_failed,
        until_decided=rules,
        trust=suite_trust(loaded.tasks),
    )
    if rules is not None and not all_tasks:
        # A decision counts the tasks the scoreboard counts: untrusted ones are not even run.
        loaded, left_out = counted_suite(loaded)
        if left_out:
            typer.echo(left_out_note(left_out), err=True)
    if rules is not None:
        # The plan lists every trial the budget could take; the run takes only those needed.
        repeat = repeats_needed([t.id for t in loaded.tasks], rules.max_repeats)
    plan = make_plan(loaded, variants, repeat if repeat is not None else (sweep_repeat or 1))
    _execute_and_report(plan, options, json_output, all_tasks=all_tasks)


def demo(
    harness: opt.HarnessOption = None,
    task: opt.TaskOption = None,
    jobs: opt.JobsOption = 2,
    results: opt.ResultsOption = opt.DEFAULT_RESULTS,
    sandbox: opt.SandboxOption = "auto",
    json_output: opt.JsonOption = False,
) -> None:
    """Run the bundled demo suite offline: reference, noop, breaker and tamperer by default.

    Real agent CLIs (claude, codex, gemini, opencode, pi, qwen, aider, mini-swe-agent) named with
    --harness run against a scripted model on 127.0.0.1 that solves each task: no key, no network.
    """
    # Imported here: the demo brings the scripted model server, which no other command needs.
    from harnessdrive.demo.run import demo_run

    names = split_names(harness or [])
    tasks = split_names(task or [])
    with demo_run(names, python=sys.executable, resolve=resolve_variants, tasks=tasks) as demo:
        options = RunOptions(
            results=results.resolve(),
            jobs=opt.positive(jobs, "--jobs"),
            sandbox=opt.sandbox_kind(sandbox),
            network=demo.network,
            price_records=demo.prices,
            trust=suite_trust(demo.plan.suite.tasks),
        )
        _execute_and_report(demo.plan, options, json_output)


def _execute_and_report(
    plan: Plan, options: RunOptions, json_output: bool, *, all_tasks: bool = False
) -> None:
    progress = progress_for_terminal()
    driver = RunDriver(plan, options, progress)
    try:
        with stop_on_signals(driver.stop):
            summary = driver.run()
    finally:
        progress.close()
    # The same trust the run's manifest records: a report read back later counts the same.
    trust = options.trust or {}
    counted, counting = count_trusted(
        summary.trials,
        {t.trial_id: trial_trust(trust, t) for t in summary.trials},
        all_tasks=all_tasks,
        unrun=[item for item in trust.values() if item.left_out],
    )
    report = build_report(
        counted,
        variants=[v.label for v in plan.variants],
        run_id=summary.run_id,
        suite=plan.suite.name,
        trust=counting,
    )
    console = stdout()
    if json_output:
        print(report.to_json())
    else:
        console.print(render_report(report))
        for line in summary.decisions:
            console.print(line, highlight=False)
        _footer(console, summary)
    if summary.interrupted:
        console.print(
            "Stopped. Trials in progress were recorded as interrupted; "
            "run the same command again to finish."
        )
        raise typer.Exit(EXIT_INTERRUPTED)
    never_ran = harnesses_that_never_ran(summary, [v.label for v in plan.variants])
    for label, fix in never_ran.items():
        print(f"error: {label} never got to run: {fix}", file=sys.stderr)
    if never_ran:
        raise typer.Exit(EXIT_NEVER_RAN)
    failed = machinery_failures(summary.trials)
    if failed:
        print(
            f"error: {len(failed)} trial(s) could not be run by the machinery "
            f"({failed[0].agent.error or failed[0].note}); they are not counted. "
            "Run the same command with --retry-failed to run them again.",
            file=sys.stderr,
        )
        raise typer.Exit(EXIT_NEVER_RAN)


def _footer(console: Console, summary: RunSummary) -> None:
    console.print(f"Results: {summary.results} (run {summary.run_id}, sandbox: {summary.sandbox})")
    if summary.spend:
        console.print(summary.spend)
    console.print(f"Again later: harnessdrive report --results {summary.results}")
    if summary.kept:
        console.print(f"Workspaces kept in {summary.kept}")
