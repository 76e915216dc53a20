"""Codex's `apply_patch` envelope for whole-file adds and single replacements."""

from __future__ import annotations


def add_file_patch(path: str, content: str) -> str:
    body = "".join(f"+{line}\n" for line in content.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"


def update_file_patch(path: str, existing: str, old: str, new: str) -> str:
    """Replace the one occurrence of `old`, widened to whole lines as the format needs."""
    count = existing.count(old)
    if count != 1:
        raise ValueError(f"{path}: the text to replace occurs {count} times, expected once")
    start_of_old = existing.index(old)
    start = existing.rfind("\n", 0, start_of_old) + 1
    end_of_old = start_of_old + len(old)
    end = existing.find("\n", end_of_old)
    end = len(existing) if end == -1 else end
    before = existing[start:end]
    after = existing[start:start_of_old] + new + existing[end_of_old:end]
    # The envelope is line based: a final newline is implied, not a line of its own.
    before, after = before.removesuffix("\n"), after.removesuffix("\n")
    removed = "".join(f"-{line}\n" for line in before.split("\n"))
    added = "".join(f"+{line}\n" for line in after.split("\n"))
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n{removed}{added}*** End Patch\n"
