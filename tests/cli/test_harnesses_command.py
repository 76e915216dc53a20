"""``harnessdrive harnesses`` shows each real CLI: installed, its version, what it supports."""

from __future__ import annotations

import os

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.cli.doctor import harness_infos
from harnessdrive.harnesses.cli.binaries import binary_variable
from harnessdrive.testing import clis
from tests.cli.conftest import PINS, cli_binary

pytestmark = pytest.mark.cli


def test_harnesses_lists_versions_of_the_installed_clis(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for harness in PINS:
        monkeypatch.setenv(binary_variable(harness), str(cli_binary(harness)))
    # Found neither on PATH nor through a variable.
    monkeypatch.delenv(binary_variable("goose"), raising=False)
    monkeypatch.setenv("PATH", f"/usr/bin{os.pathsep}/bin")

    infos = {info.name: info for info in harness_infos()}

    for harness, pin in PINS.items():
        info = infos[harness]
        assert info.installed, info
        assert info.version == clis.version(pin)
        assert info.uses_model
        assert info.detail.startswith("supports ")
    assert not infos["goose"].installed
    assert "untested" in infos["goose"].detail
    assert run_cli(["harnesses"]) == 0
    table = capsys.readouterr().out
    for harness, pin in PINS.items():
        assert harness in table and clis.version(pin) in table
