"""Say when the trials a report counts do not all come from the same conditions.

A run may count trials it resumed from an earlier run of the same suite, and a results folder
outlives edits to its suites and upgrades of harnessdrive; a report states every such mix in its
header instead of leaving it to the reader to find in result.json.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from harnessdrive.store.results import TrialResult

UNRECORDED = "unrecorded"


def describe_mix(results: Sequence[TrialResult], run_id: str | None) -> tuple[str, ...]:
    """One sentence per way the trials differ; empty when they all agree."""
    lines: list[str] = []
    if run_id is not None:
        others = Counter(r.run_id or UNRECORDED for r in results if r.run_id != run_id)
        if others:
            lines.append(
                f"{sum(others.values())} of {len(results)} trial(s) were recorded by another run "
                f"of this suite and reused here: {_counts(others)}."
            )
    keys = _suite_keys(results)
    suites = Counter(keys)
    if len(suites) > 1:
        folders: dict[str, str | None] = {}
        for key, result in zip(keys, results, strict=True):
            folders[key] = folders.get(key) or result.suite_folder
        where = {s: folders[s] or "folder not recorded" for s in suites}
        named = Counter({f"{s} ({where[s]})": n for s, n in suites.items()})
        lines.append(f"Trials come from {len(suites)} different suites: {_counts(named)}.")
    versions = Counter(r.suite_version for r in results if r.suite_version)
    if len(versions) > 1:
        lines.append(
            f"Trials come from {len(versions)} versions of the suite (it changed between "
            f"runs): {_counts(versions)}."
        )
    sandboxes = Counter(r.sandbox for r in results)
    if len(sandboxes) > 1:
        lines.append(f"Trials ran in different sandboxes: {_counts(sandboxes)}.")
    tools = Counter(r.harnessdrive_version or UNRECORDED for r in results)
    if len(tools) > 1:
        lines.append(f"Trials were recorded by different harnessdrive versions: {_counts(tools)}.")
    fingerprints: dict[str, set[str]] = {}
    for result in results:
        fingerprints.setdefault(result.task, set()).add(result.task_fingerprint)
    edited = sorted(task for task, seen in fingerprints.items() if len(seen) > 1)
    if edited:
        lines.append(
            "Trials of these tasks were run on different versions of the task (it was edited "
            f"between runs): {', '.join(edited)}."
        )
    return tuple(lines)


def shared_identity(results: Sequence[TrialResult]) -> str | None:
    """The suite identity every trial shares (counting trials of before identities as above)."""
    keys = set(_suite_keys(results))
    only = keys.pop() if len(keys) == 1 else None
    return only if any(r.suite_id == only for r in results) else None


def _suite_keys(results: Sequence[TrialResult]) -> list[str]:
    """The suite each trial belongs to. One recorded before suite identities names only its
    suite, and counts as the one identified suite of that name among ``results`` when there is
    one (a run resumed it from there because its task's fingerprint matched)."""
    identities: dict[str, set[str]] = {}
    for result in results:
        if result.suite_id is not None:
            identities.setdefault(result.suite, set()).add(result.suite_id)
    keys = []
    for result in results:
        named = identities.get(result.suite, set())
        only = next(iter(named)) if len(named) == 1 else result.suite
        keys.append(result.suite_id or only)
    return keys


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{name} ({count})" for name, count in sorted(counter.items()))
