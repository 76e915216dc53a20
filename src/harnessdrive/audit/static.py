"""Checks of a task's text that need no run: whether the prompt quotes the answer."""

from __future__ import annotations

import ast

from harnessdrive.tasks.loading import Task

_SHORTEST = 4
"""Literals shorter than this (``0``, ``"a"``) appear in prompts by chance."""


def expected_values(task: Task) -> set[str]:
    """String and number literals of the hidden Python tests, as text, long enough to matter."""
    found: set[str] = set()
    for item in task.hidden:
        if item.source.is_dir() or item.source.suffix != ".py":
            continue
        try:
            tree = ast.parse(item.source.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                for side in (node.left, *node.comparators):
                    if isinstance(side, ast.Constant) and not isinstance(side.value, bool):
                        text = str(side.value)
                        if len(text) >= _SHORTEST:
                            found.add(text)
    return found


def answer_in_prompt(task: Task) -> list[str]:
    """A problem for each expected value of the hidden tests that the prompt quotes."""
    return [
        f"the prompt quotes {value!r}, a value the hidden tests expect: describe the behaviour "
        "without giving the answer"
        for value in sorted(expected_values(task))
        if value in task.prompt
    ]
