"""``check --audit``: the exploit library run on every task, shown and recorded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.table import Table

from harnessdrive.audit.record import TaskAudit, write_audit
from harnessdrive.checking.cases import TaskCheck
from harnessdrive.cli.output import stdout
from harnessdrive.sandbox.runner import SandboxKind
from harnessdrive.tasks.loading import Suite


def run_audit(
    suite: Suite, checks: list[TaskCheck], *, logs: Path, jobs: int, sandbox: SandboxKind
) -> list[TaskAudit]:
    """Audit every task; a task the self-test found broken is recorded invalid as well."""
    from harnessdrive.audit.runner import audit  # here: the exploit library loads slowly

    audits = audit(
        suite, logs=logs / "audit", jobs=jobs, sandbox=sandbox, python=sys.executable, record=False
    )
    broken = {item.task: item.problems for item in checks}
    for task, item in zip(suite.tasks, audits, strict=True):
        item.problems.extend(f"self-test: {p}" for p in broken.get(task.id, []))
        write_audit(task.folder, item)
    return audits


def show_audit(audits: list[TaskAudit]) -> None:
    console = stdout()
    table = Table(title="Audit", title_justify="left")
    for column in ("Task", "Exploits", "Got a pass", "Trust"):
        table.add_column(column)
    for item in audits:
        table.add_row(
            item.task,
            str(len(item.exploits)),
            ", ".join(e.exploit for e in item.broken_by) or "-",
            item.trust_word.upper() if not item.trusted else item.trust_word,
        )
    console.print(table)
    untrusted = [item for item in audits if not item.trusted]
    for item in untrusted:
        for exploit in item.broken_by:
            console.print(f"{item.task}: exploit {exploit.exploit} got a pass; fix: {exploit.fix}")
        for problem in item.problems:
            console.print(f"{item.task}: {problem}")
    if untrusted:
        names = ", ".join(item.task for item in untrusted)
        console.print(f"{len(untrusted)} of {len(audits)} tasks untrusted: {names}")
    else:
        console.print(f"No exploit got a pass on any of the {len(audits)} tasks.")
    for item in audits:
        if not item.audited:
            console.print(f"{item.task}: not audited: no exploit applies to its grader kind")


def with_audit(text: str, audits: list[TaskAudit]) -> str:
    """A command's JSON (the self-test's, mining's summary) with the audit added under
    ``audit`` (when one ran), and ``ok`` false when it found an untrusted task."""
    if not audits:
        return text
    data = json.loads(text)
    data["audit"] = [item.as_json() for item in audits]
    if "ok" in data:
        data["ok"] = data["ok"] and all(item.trusted for item in audits)
    return json.dumps(data, indent=2) + ("\n" if text.endswith("\n") else "")
