"""``harnessdrive check``: the grader's self-test on a suite."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from harnessdrive.audit.record import TaskAudit
from harnessdrive.checking.cases import CheckCase, TaskCheck, check_logs, checks_json
from harnessdrive.checking.suite import check_baselines, self_test
from harnessdrive.cli import options as opt
from harnessdrive.cli.audit_view import show_audit, with_audit
from harnessdrive.cli.output import stdout
from harnessdrive.grading.differential.baselines import Baseline, baselines_json
from harnessdrive.harbor.direct import suite_folder
from harnessdrive.tasks.loading import Suite, load_suite


def check(
    suite: opt.SuiteArgument,
    jobs: opt.JobsOption = 2,
    sandbox: opt.SandboxOption = "auto",
    json_output: opt.JsonOption = False,
    repeat: Annotated[
        int,
        typer.Option(
            "--repeat",
            "-n",
            metavar="N",
            help="Grade the reference and the untouched repository N times per task and flag "
            "any task whose verdicts disagree.",
        ),
    ] = 1,
    audit: Annotated[
        bool,
        typer.Option(
            "--audit",
            help="Also run the exploit library on every task and record which tasks can be "
            "trusted (audit.json beside each task).",
        ),
    ] = False,
    keep_logs: Annotated[
        bool,
        typer.Option(
            "--keep-logs",
            help="Keep every case's logs in a folder of the temporary directory and print "
            "where; without it they are removed when the check ends.",
        ),
    ] = False,
) -> None:
    """Prove each task grades right: reference passes, untouched and noop fail, and every
    self-test fixture gets the verdict its task declares."""
    # A Harbor task or dataset runs as the suite imported from it (docs/harbor.md).
    loaded = load_suite(suite_folder(suite, lambda line: typer.echo(line, err=True)))
    with check_logs(keep=keep_logs) as logs:
        _check(loaded, logs, jobs, sandbox, json_output, repeat, audit, keep_logs)


def _check(
    loaded: Suite,
    logs: Path,
    jobs: int,
    sandbox: str,
    json_output: bool,
    repeat: int,
    audit: bool,
    keep_logs: bool,
) -> None:
    where = f"Logs of every case: {logs}" if keep_logs else _KEEP_THEM
    audits: list[TaskAudit] = []
    if audit:
        from harnessdrive.audit.runner import check_and_audit  # loads the exploit library

        checks, audits = check_and_audit(
            loaded,
            logs=logs,
            jobs=max(jobs, 1),
            sandbox=opt.sandbox_kind(sandbox),
            python=sys.executable,
            repeat=opt.positive(repeat, "--repeat"),
        )
    else:
        checks = self_test(
            loaded,
            logs=logs,
            jobs=max(jobs, 1),
            sandbox=opt.sandbox_kind(sandbox),
            python=sys.executable,
            repeat=opt.positive(repeat, "--repeat"),
        )
    baselines = check_baselines(
        loaded, checks, sandbox=opt.sandbox_kind(sandbox), python=sys.executable
    )
    wrong = [
        f"{task}: {b.name} scored {b.score:.0%}, not {b.expected}"
        for task, found in baselines.items()
        for b in found
        if not b.ok
    ]
    broken = [item for item in checks if not item.ok]
    untrusted = any(not item.trusted for item in audits)
    if json_output:
        print(with_audit(checks_json(checks, baselines_json(baselines)), audits))
        if keep_logs:
            typer.echo(where, err=True)
        if broken or wrong or untrusted:
            raise typer.Exit(1)
        return
    console = stdout()
    if baselines:
        console.print(_baseline_table(baselines))
    console.print(_builtin_table(loaded.name, checks))  # printed whatever a baseline scored
    if audits:
        show_audit(audits)
    if any(item.fixtures for item in checks):
        console.print(_fixture_table(checks))
    for item in checks:
        for note in item.notes:
            console.print(f"{item.task}: {note}")
    for item in broken:
        for problem in item.problems:
            console.print(f"{item.task}: {problem}")
    if broken:
        console.print(
            f"{len(broken)} of {_tasks(len(checks))} broken: {', '.join(i.task for i in broken)}"
        )
        console.print(where)
    for line in wrong:
        console.print(line)
    if wrong and not broken:
        console.print(where)
    if broken or wrong:
        raise typer.Exit(1)
    if untrusted:
        console.print(where)
        raise typer.Exit(1)
    fixtures = sum(len(item.fixtures) for item in checks)
    every = "The task grades" if len(checks) == 1 else f"All {len(checks)} tasks grade"
    agree = "the fixture agrees" if fixtures == 1 else f"all {fixtures} fixtures agree"
    kept = f" Logs: {logs}" if keep_logs else ""
    console.print(f"{every} correctly" + (f"; {agree}." if fixtures else ".") + kept)


_KEEP_THEM = "Run the check again with --keep-logs to keep the logs of every case."


def _tasks(count: int) -> str:
    return "1 task" if count == 1 else f"{count} tasks"


def _builtin_table(name: str, checks: list[TaskCheck]) -> Table:
    table = Table(title=f"Self-test of {name}", title_justify="left")
    for column in ("Task", "untouched", "reference", "noop", "Fixtures", "Verdict"):
        table.add_column(column)
    for item in checks:
        cells = {case.name: _mark(case) for case in item.cases if case.kind == "builtin"}
        agreeing = sum(case.ok for case in item.fixtures)
        table.add_row(
            item.task,
            cells.get("untouched", "-"),
            cells.get("reference", "-"),
            cells.get("noop", "-"),
            f"{agreeing} of {len(item.fixtures)} agree" if item.fixtures else "-",
            "ok" if item.ok else "BROKEN",
        )
    return table


def _fixture_table(checks: list[TaskCheck]) -> Table:
    table = Table(title="Self-test fixtures", title_justify="left")
    for column in ("Task", "Fixture", "Expected", "Got", "Visible", "Files", "Lines", "Verdict"):
        table.add_column(column, justify="right" if column in ("Files", "Lines") else "left")
    for item in checks:
        for case in item.fixtures:
            visible = "-"
            if case.visible_expected is not None:
                visible = f"{case.visible or '-'} (want {case.visible_expected})"
            table.add_row(
                item.task,
                case.name,
                case.expected,
                case.outcome,
                visible,
                "-" if case.files is None else str(case.files),
                "-" if case.lines is None else str(case.lines),
                "agrees" if case.ok else "DISAGREES",
            )
    return table


def _mark(case: CheckCase) -> str:
    return f"{case.outcome}{'' if case.ok else ' ✗'}"


def _baseline_table(baselines: dict[str, list[Baseline]]) -> Table:
    table = Table(title="Differential baselines", title_justify="left")
    for name in ("Task", "Baseline", "Expected", "Scored", ""):
        table.add_column(name)
    for task, found in baselines.items():
        for item in found:
            mark = "ok" if item.ok else "WRONG"
            table.add_row(task, item.name, item.expected, f"{item.score:.0%}", mark)
    return table
