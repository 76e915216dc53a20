"""The command line imports only the command it runs; help and typos still see them all."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harnessdrive.cli.app import COMMANDS, run_cli


def _modules_after(args: list[str]) -> set[str]:
    code = (
        "import sys\n"
        "from harnessdrive.cli.app import run_cli\n"
        f"run_cli({args!r})\n"
        "print(' '.join(m for m in sys.modules if m.startswith('harnessdrive.cli.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_a_command_imports_its_own_module_only() -> None:
    loaded = _modules_after(["mine", "--help"])
    assert "harnessdrive.cli.mine_cmd" in loaded
    others = {f"harnessdrive.cli.{module}" for module, _ in COMMANDS.values()} - {
        "harnessdrive.cli.mine_cmd"
    }
    assert not loaded & others


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["--help"]) == 0
    shown = capsys.readouterr().out
    for name in COMMANDS:
        assert name in shown


def test_a_typo_of_a_command_is_named_with_the_closest_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_cli(["minee"]) == 2
    assert "'mine'" in capsys.readouterr().err
