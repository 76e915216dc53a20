"""``harnessdrive check``: the grader's self-test on a suite."""

from __future__ import annotations

import sys

import typer
from rich.table import Table

from harnessdrive.cli import options as opt
from harnessdrive.cli.output import stdout
from harnessdrive.running.check import check_suite, new_logs_folder
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.tasks.loading import load_suite


def check(
    suite: opt.SuiteArgument,
    jobs: opt.JobsOption = 2,
    sandbox: opt.SandboxOption = "auto",
) -> None:
    """Prove each task grades right: reference passes, untouched and noop fail."""
    loaded = load_suite(suite)
    logs = new_logs_folder()
    checks = check_suite(
        loaded,
        sandbox=get_sandbox(opt.sandbox_kind(sandbox)),
        python=sys.executable,
        logs=logs,
        jobs=max(jobs, 1),
    )
    table = Table(title=f"Self-test of {loaded.name}", title_justify="left")
    for column in ("Task", "untouched", "reference", "noop", "Verdict"):
        table.add_column(column)
    for item in checks:
        cells = {case.name: f"{case.outcome}{'' if case.ok else ' ✗'}" for case in item.cases}
        table.add_row(
            item.task,
            cells.get("untouched", "-"),
            cells.get("reference", "-"),
            cells.get("noop", "-"),
            "ok" if item.ok else "BROKEN",
        )
    console = stdout()
    console.print(table)
    broken = [item for item in checks if not item.ok]
    for item in broken:
        for problem in item.problems:
            console.print(f"{item.task}: {problem}")
    if broken:
        console.print(
            f"{len(broken)} of {len(checks)} task(s) broken: {', '.join(i.task for i in broken)}"
        )
        console.print(f"Logs of every case: {logs}")
        raise typer.Exit(1)
    console.print(f"All {len(checks)} task(s) grade correctly. Logs: {logs}")
