"""The model catalogue in a session: it names the default matrix, takes the project's own lines,
says what it knows of each model, and offers the nearest name for an unknown one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugin.test_pytest_plugin import session_folder

pytest_plugins = ["pytester"]


def write_default_case(root: Path, ini: str = "") -> None:
    evals = root / "evals"
    (evals / "fixtures" / "start").mkdir(parents=True, exist_ok=True)
    (evals / "fixtures" / "start" / "README.md").write_text("start\n")
    (evals / "eval_default.py").write_text(
        "import harnessdrive\n\n"
        "@harnessdrive.evalcase('tidy up', fixture='start')\n"
        "def eval_tidy(output):\n"
        "    raise AssertionError('a dry run never calls the case')\n"
    )
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n" + ini)


def cells(root: Path) -> list[str]:
    forecasts = json.loads((session_folder(root) / "forecast.json").read_text())
    return sorted(f["cell"] for f in forecasts)


def test_the_default_matrix_is_each_cli_s_newest_tier_2_model(pytester: pytest.Pytester) -> None:
    write_default_case(pytester.path)
    run = pytester.runpytest("evals", "--dry-run", "-q")
    assert cells(pytester.path) == ["claude/claude-sonnet-5-5", "codex/gpt-6.1-terra"]
    out = run.stdout.str()
    assert "matrix scope = default" in out
    assert "models: claude-sonnet-5-5: sonnet line, tier 2 | gpt-6.1-terra: terra line" in out


def test_the_project_s_catalogue_lines_change_the_default_and_what_is_shown(
    pytester: pytest.Pytester,
) -> None:
    ini = (
        "harnessdrive_models = [\n"
        '    "claude/claude-sonnet-5: released=2026-11-20",\n'
        '    "codex/gpt-6.1-terra: cutoff=2026-03",\n'
        "]\n"
    )
    write_default_case(pytester.path, ini)
    run = pytester.runpytest("evals", "--dry-run", "-q")
    assert cells(pytester.path) == ["claude/claude-sonnet-5", "codex/gpt-6.1-terra"]
    out = run.stdout.str()
    assert (
        "claude-sonnet-5: sonnet line, tier 2; released 2026-11-20; training cutoff 2026-01" in out
    )
    assert "gpt-6.1-terra: terra line, tier 2; training cutoff 2026-03" in out


def test_an_unknown_model_is_refused_with_the_nearest_catalogued_name(
    pytester: pytest.Pytester,
) -> None:
    write_default_case(pytester.path, 'harnessdrive_matrix = ["claude/claude-sonet-5"]\n')
    run = pytester.runpytest("evals", "--dry-run", "-q")
    assert run.ret != 0
    assert "(did you mean 'claude-sonnet-5'?)" in run.stdout.str()


def test_a_bad_catalogue_line_stops_collection(pytester: pytest.Pytester) -> None:
    write_default_case(pytester.path, 'harnessdrive_models = ["gpt-6.2-sol: tier=9"]\n')
    run = pytester.runpytest("evals", "--dry-run", "-q")
    assert run.ret != 0
    assert "model catalogue line 'gpt-6.2-sol: tier=9'" in run.stdout.str()
