"""Verifiers that read more than one thing: every check at once (``check_all``), how much of a
file's content survived the agent's change, and the use of the tool under test."""

from __future__ import annotations

from collections.abc import Callable

from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput
from harnessdrive.pytest_plugin.verifiers.actions import _shown, _tools

Check = Callable[[CaseOutput], None]


def check_all(output: CaseOutput, *checks: Check) -> None:
    """Run every check and report every failure together (a case that stops at the first
    failed assertion hides the rest). A check that cannot evaluate is reported beside them;
    alone, it raises as it would."""
    if not checks:
        raise CannotEvaluate("check_all needs at least one check")
    failed: list[str] = []
    unknown: list[CannotEvaluate] = []
    for check in checks:
        try:
            check(output)
        except CannotEvaluate as exc:
            unknown.append(exc)
        except AssertionError as exc:
            failed.append(str(exc).removeprefix(f"{output.cell.id}: ") or type(exc).__name__)
    if failed:
        parts = [line.splitlines()[0] for line in failed]
        parts += [f"cannot evaluate: {exc}" for exc in unknown]
        raise AssertionError(
            f"{output.cell.id}: {len(failed)} of {len(checks)} checks failed: " + "; ".join(parts)
        )
    if unknown:
        raise unknown[0]


def _counts(diff: str, path: str) -> tuple[int, int] | None:
    """Lines added and deleted in ``path`` by the unified diff; None when it is not in it."""
    found = None
    for section in diff.split("diff --git ")[1:]:
        header = section.splitlines()[0] if section else ""
        if not header.startswith(f"a/{path} "):
            continue
        added = deleted = 0
        for line in section.splitlines()[1:]:
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                deleted += 1
        found = (added, deleted)
    return found


def check_content_preserved(output: CaseOutput, path: str, at_least: float = 0.9) -> None:
    """At least ``at_least`` of the lines ``path`` started with are still there (an edit that
    rewrites or drops a document it was asked to amend fails)."""
    if not 0 < at_least <= 1:
        raise CannotEvaluate(f"check_content_preserved: at_least is in (0, 1], not {at_least}")
    diff = output.diff
    if not diff:
        raise CannotEvaluate(f"{output.cell.id}: no diff.patch to read the original from")
    counts = _counts(diff, path)
    if counts is None:
        return  # not touched: all of it is preserved
    added, deleted = counts
    final = output.path(path)
    now = len(final.read_text(errors="replace").splitlines()) if final.is_file() else 0
    original = now - added + deleted
    if original <= 0:
        raise CannotEvaluate(f"{output.cell.id}: {path} had no lines to preserve")
    kept = (original - deleted) / original
    if kept < at_least:
        raise AssertionError(
            f"{output.cell.id}: {path} kept {kept:.0%} of its {original} original lines "
            f"({deleted} deleted), less than {at_least:.0%}"
        )


def check_tool_under_test(
    output: CaseOutput, tool: str, *, at_least: int = 1, most: int | None = None
) -> None:
    """The tool under test (a tool name, or an MCP tool's own name: ``mcp__server__tool``
    counts as ``tool``) was called at least ``at_least`` and at most ``most`` times."""
    used = _tools(output)
    calls = sum(n for name, n in used.items() if name == tool or name.endswith(f"__{tool}"))
    if calls < at_least or (most is not None and calls > most):
        bound = f"[{at_least}, {most}]" if most is not None else f"at least {at_least}"
        raise AssertionError(
            f"{output.cell.id}: the tool under test {tool} was called {calls} time(s), not "
            f"{bound} (it called {_shown(used)})"
        )
