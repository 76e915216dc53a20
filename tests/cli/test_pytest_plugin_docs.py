"""docs/pytest-plugin.md's offline example, run as written: its files and its command, a real
Claude Code against the scripted model server the eval file starts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from harnessdrive.harnesses.cli.binaries import binary_variable
from tests.cli.conftest import cli_binary

pytestmark = pytest.mark.cli
pytest_plugins = ["pytester"]

DOC = Path(__file__).resolve().parents[2] / "docs" / "pytest-plugin.md"
SECTION = "## An offline example: a real CLI against a scripted model"


def example() -> tuple[dict[str, str], list[str]]:
    """The section's files (a backquoted path, a colon, a fenced block) and its command."""
    text = DOC.read_text()
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    files = {
        path: body
        for path, body in re.findall(
            r"^`([^`\s]+)`[^\n]*:\n\n```[a-z]*\n(.*?)```", section, re.M | re.S
        )
    }
    (command,) = re.findall(r"^```\n(pytest [^\n]*)\n```", section, re.M)
    return files, shlex.split(command)[1:]


def test_the_offline_example_runs_as_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    files, args = example()
    assert set(files) == {
        "pyproject.toml",
        "prices.toml",
        "evals/fixtures/empty/README.md",
        "evals/eval_offline.py",
    }
    for path, body in files.items():
        target = pytester.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)
    monkeypatch.setenv(binary_variable("claude"), str(cli_binary("claude")))

    run = pytester.runpytest_subprocess(*args)

    run.assert_outcomes(passed=1)
    assert run.ret == pytest.ExitCode.OK
    assert "eval_offline.py::eval_hello[local-claude] PASSED  pass  $0.0" in run.stdout.str()
