"""The scope check: changes to files outside the ones a task names (``[grade.scope]``).

A change outside the scope is an ``out-of-scope`` finding for each path. It is reported and the
tests still decide, unless the task says ``on_violation = "tamper"``. Paths the task protects or
restores are left to those rules: a protected path is already a tamper finding, and a restored
one is put back and never counts.
"""

from __future__ import annotations

from harnessdrive.grading.verdict import Finding
from harnessdrive.tasks.check_models import ScopeSpec
from harnessdrive.tasks.globs import matches
from harnessdrive.workspace.changes import Changes

OUT_OF_SCOPE = "out-of-scope"


def scope_findings(
    changes: Changes, scope: ScopeSpec | None, *, exempt: tuple[str, ...] = ()
) -> list[Finding]:
    """One finding per changed path outside ``scope`` and not matched by ``exempt``."""
    if scope is None:
        return []
    severity = "tamper" if scope.on_violation == "tamper" else "report"
    return [
        Finding(
            code=OUT_OF_SCOPE,
            path=change.path,
            detail=f"{change.kind} outside the task's scope",
            severity=severity,
        )
        for change in changes.files
        if not matches(change.path, scope.paths) and not (exempt and matches(change.path, exempt))
    ]
