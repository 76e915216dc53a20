"""Library errors name settings in the library's terms; the command line adds its own flags."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from harnessdrive.cli.flags import FLAGS, error_message, with_flags
from harnessdrive.errors import SETTING_NAMES, BudgetError, Setting, UserError

SRC = Path(__file__).resolve().parents[2] / "src" / "harnessdrive"


def test_every_setting_has_a_flag() -> None:
    assert set(FLAGS) == SETTING_NAMES


def test_a_setting_the_library_does_not_know_is_a_bug() -> None:
    with pytest.raises(ValueError, match="unknown setting 'max_dollars'"):
        Setting("max_dollars")


def test_the_cli_adds_the_flags_after_the_first_line() -> None:
    error = BudgetError(
        "a spend cap is required", settings=(Setting("max_usd", "USD"), Setting("price_files"))
    )
    assert str(error) == "a spend cap is required"
    assert error_message(error) == "a spend cap is required (--max-usd USD, --prices)"
    assert with_flags("it failed\nFull output: log", (Setting("setup_command", "CMD"),)) == (
        "it failed (--setup-cmd CMD)\nFull output: log"
    )
    assert error_message(UserError("no settings here")) == "no settings here"


def _strings(node: ast.AST) -> str:
    return " ".join(
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )


def _error_messages(path: Path) -> list[tuple[int, str]]:
    """The literal text of every ``...Error(...)`` raised or built in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and node.args:
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name.endswith("Error"):
                found.append((node.lineno, _strings(node.args[0])))
    return found


def test_no_library_error_names_a_flag_of_the_command_line() -> None:
    flags = "|".join(sorted({re.escape(f) for f in FLAGS.values() if f.startswith("--")}))
    a_flag = re.compile(rf"(?<![\w-])({flags})(?![\w-])")
    named = [
        f"{path.relative_to(SRC)}:{line}: {found.group()}"
        for path in sorted(SRC.rglob("*.py"))
        # The two front ends: the command line, and the pytest plugin with its own options.
        if path.relative_to(SRC).parts[0] not in ("cli", "pytest_plugin")
        for line, text in _error_messages(path)
        if (found := a_flag.search(text))
    ]
    assert named == []
