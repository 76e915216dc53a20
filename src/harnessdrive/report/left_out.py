"""The scoreboard's note on tasks left out because their audit (check --audit) found them
untrusted or invalid."""

from __future__ import annotations

from collections.abc import Sequence


def left_out_note(untrusted: Sequence[str]) -> str:
    count = len(untrusted)
    tasks = "1 task" if count == 1 else f"{count} tasks"
    return (
        f"Left out {tasks} the audit marked untrusted or invalid: {', '.join(untrusted)} "
        "(check --audit; --all-tasks counts them)."
    )
