"""The check a Ray driver runs on each node before it sends trials there."""

from __future__ import annotations

import pytest

from harnessdrive import __version__
from harnessdrive.executors.ray_nodes import check_node, node_table
from harnessdrive.harnesses.registry import get_harness
from harnessdrive.trial.job import WorkerSettings


def test_a_node_without_the_cli_says_so_and_how_to_fix_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HARNESSDRIVE_QWEN_BINARY", "/nowhere/qwen")
    report = check_node("n1", get_harness("qwen"), WorkerSettings(sandbox="none"), __version__)
    assert report.problem is not None
    assert report.problem.startswith("qwen cannot run here: not found")
    assert "HARNESSDRIVE_QWEN_BINARY" in report.problem
    assert "supports" not in report.problem
    assert "no: qwen cannot run here" in node_table([report])


def test_a_node_with_another_harnessdrive_version_is_refused() -> None:
    report = check_node("n1", get_harness("reference"), WorkerSettings(sandbox="none"), "0.0.0")
    assert report.problem == f"harnessdrive {__version__} is installed here, the driver runs 0.0.0"
