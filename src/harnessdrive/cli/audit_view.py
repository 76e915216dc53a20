"""``check --audit``: the exploit library run on every task, shown and recorded."""

from __future__ import annotations

import json

from rich.table import Table

from harnessdrive.audit.record import TaskAudit
from harnessdrive.cli.output import stdout


def show_audit(audits: list[TaskAudit]) -> None:
    console = stdout()
    table = Table(title="Audit", title_justify="left")
    for column in ("Task", "Exploits", "Broken by", "Trust"):
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
            console.print(
                f"{item.task}: exploit {exploit.exploit} got {exploit.got}; fix: {exploit.fix}"
            )
        for problem in item.problems:
            console.print(f"{item.task}: {problem}")
    if untrusted:
        names = ", ".join(item.task for item in untrusted)
        console.print(f"{len(untrusted)} of {len(audits)} tasks untrusted: {names}")
    else:
        console.print(
            "No exploit got a pass, a score it did not earn or a 'not counted' on any of the "
            f"{len(audits)} tasks."
        )
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
