"""Verifiers of what the run left in the workspace: which files its change touched, added or
deleted, and what a file holds. Paths are relative to the workspace."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable

from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput
from harnessdrive.workspace.changes import PATCH_CUT_MARK


def _need(paths: tuple[str, ...], check: str, what: str = "path") -> None:
    if not paths:
        raise CannotEvaluate(f"{check} needs at least one {what}")


def _changes(output: CaseOutput) -> dict[str, str]:
    """Each path the change touched and how: ``added``, ``deleted`` or ``modified``."""
    patch = output.diff
    if PATCH_CUT_MARK in patch:
        # The files past the cut are unknown: any of them may be added or deleted.
        raise CannotEvaluate(f"{output.cell.id}: the change's patch was cut at its size limit")
    changes: dict[str, str] = {}
    current = ""
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            current = line.rsplit(" b/", 1)[-1]
            changes[current] = "modified"
        elif line.startswith("new file mode") and current:
            changes[current] = "added"
        elif line.startswith("deleted file mode") and current:
            changes[current] = "deleted"
    for path in output.files_written:
        changes.setdefault(path, "modified")
    return changes


def _listed(paths: Iterable[str]) -> str:
    shown = sorted(paths)
    return ", ".join(shown) if shown else "nothing"


def check_files_written(output: CaseOutput, *paths: str) -> None:
    """This run wrote each of ``paths`` (its change touches them): a file that merely exists
    in the fixture does not count."""
    _need(paths, "check_files_written")
    written = set(output.files_written)
    missing = [p for p in paths if p not in written]
    if missing:
        raise AssertionError(
            f"{output.cell.id}: not written by this run: {', '.join(missing)} "
            f"(it wrote {_listed(written)})"
        )


def check_file_unchanged(output: CaseOutput, *paths: str) -> None:
    """The change leaves each of ``paths`` as it was."""
    _need(paths, "check_file_unchanged")
    written = set(output.files_written)
    changed = [p for p in paths if p in written]
    if changed:
        raise AssertionError(f"{output.cell.id}: changed: {', '.join(changed)}")


def _no_stray(output: CaseOutput, how: str, allow: Iterable[str]) -> None:
    """No path the change ``how`` (added, deleted) outside the ``allow`` globs."""
    allowed = tuple(allow)
    stray = sorted(
        p
        for p, done in _changes(output).items()
        if done == how and not any(fnmatch.fnmatch(p, g) for g in allowed)
    )
    if stray:
        raise AssertionError(f"{output.cell.id}: {how} files: {', '.join(stray)}")


def check_no_files_added(output: CaseOutput, allow: Iterable[str] = ()) -> None:
    """The change adds no file, except those matching an ``allow`` glob."""
    _no_stray(output, "added", allow)


def check_files_deleted(output: CaseOutput, *paths: str) -> None:
    """The change deletes each of ``paths``."""
    _need(paths, "check_files_deleted")
    deleted = {p for p, how in _changes(output).items() if how == "deleted"}
    kept = [p for p in paths if p not in deleted]
    if kept:
        raise AssertionError(
            f"{output.cell.id}: not deleted: {', '.join(kept)} (it deleted {_listed(deleted)})"
        )


def check_no_files_deleted(output: CaseOutput, allow: Iterable[str] = ()) -> None:
    """The change deletes no file, except those matching an ``allow`` glob."""
    _no_stray(output, "deleted", allow)


def check_changes_within(output: CaseOutput, *globs: str) -> None:
    """Every path the change touches matches one of ``globs`` (the files a task may edit)."""
    _need(globs, "check_changes_within", "glob")
    outside = [p for p in _changes(output) if not any(fnmatch.fnmatch(p, g) for g in globs)]
    if outside:
        raise AssertionError(
            f"{output.cell.id}: changed outside {', '.join(globs)}: {', '.join(sorted(outside))}"
        )


def check_diff_within(output: CaseOutput, most_lines: int) -> None:
    """The change adds and deletes at most ``most_lines`` lines together."""
    diff = output.result.diff
    if diff.lines_changed > most_lines:
        raise AssertionError(
            f"{output.cell.id}: the change is {diff.lines_changed} lines "
            f"(+{diff.lines_added} -{diff.lines_deleted}), more than {most_lines}"
        )


def check_file_contains(output: CaseOutput, path: str, *texts: str) -> None:
    """The final ``path`` holds each of ``texts``."""
    _need(texts, "check_file_contains", "text")
    content = output.read(path)
    missing = [t for t in texts if t not in content]
    if missing:
        shown = ", ".join(repr(t) for t in missing)
        raise AssertionError(f"{output.cell.id}: {path} lacks {shown} ({len(content)} chars)")


def check_file_lacks(output: CaseOutput, path: str, *texts: str) -> None:
    """The final ``path`` holds none of ``texts`` (a marker that had to go, a secret)."""
    _need(texts, "check_file_lacks", "text")
    content = output.read(path)
    present = [t for t in texts if t in content]
    if present:
        shown = ", ".join(map(repr, present))
        raise AssertionError(f"{output.cell.id}: {path} still holds {shown}")


def check_file_matches(output: CaseOutput, path: str, pattern: str) -> None:
    """The final ``path`` has a match of the regular expression ``pattern`` (multi-line)."""
    try:
        compiled = re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        raise CannotEvaluate(f"check_file_matches: bad pattern {pattern!r}: {exc}") from None
    if compiled.search(output.read(path)) is None:
        raise AssertionError(f"{output.cell.id}: {path} has no match of {pattern!r}")


def check_block_preserved(output: CaseOutput, path: str, block: str) -> None:
    """The final ``path`` still holds ``block`` character for character (a licence header, a
    section another workflow owns): reformatting it counts as losing it."""
    if not block.strip():
        raise CannotEvaluate("check_block_preserved needs a non-empty block")
    content = output.read(path)
    if block in content:
        return
    head = block.strip().splitlines()[0]
    how = "present but altered" if head in content else "gone"
    raise AssertionError(f"{output.cell.id}: {path}: the preserved block is {how}: {head!r}...")
