"""A PyPI CLI's environment: built with uv where there is one, else (or where uv fails) pip."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harnessdrive.harnesses.cli import install
from harnessdrive.harnesses.cli.install import CliPin
from harnessdrive.testing.wheels import make_wheel

PIN = CliPin("fake", "pypi", "fakecli", "1.0", "venv/bin/fakecli", "fakecli")


@pytest.fixture
def offline_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding the pinned wheel, the only place either installer may look."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel = make_wheel("fakecli", "1.0", {"fakecli.py": "ANSWER = 42\n"})
    (wheels / "fakecli-1.0-py3-none-any.whl").write_bytes(wheel)
    for name, value in {
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "UV_OFFLINE": "1",
        "UV_FIND_LINKS": str(wheels),
        "UV_NO_CACHE": "1",
    }.items():
        monkeypatch.setenv(name, value)
    return wheels


def installed_answer(target: Path) -> str:
    python = target / "venv" / "bin" / "python"
    done = subprocess.run(
        [str(python), "-c", "import fakecli; print(fakecli.ANSWER)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_uv_builds_the_environment_where_there_is_one(tmp_path: Path, offline_index: Path) -> None:
    uv = install._uv()
    if uv is None:
        pytest.skip("uv is not installed here")  # scripts/test.sh installs it
    target = tmp_path / "fake"
    target.mkdir()
    log = target / "install.log"
    install._install_pypi(PIN, target, log, uv)
    assert installed_answer(target) == "42"
    commands = [line for line in log.read_text().splitlines() if line.startswith("$ ")]
    assert [line.split()[1:3] for line in commands] == [[uv, "venv"], [uv, "pip"]]


def test_pip_takes_over_where_uv_fails(tmp_path: Path, offline_index: Path) -> None:
    broken = tmp_path / "uv"
    broken.write_text("#!/bin/sh\necho 'uv: no index reachable' >&2\nexit 2\n")
    broken.chmod(0o755)
    target = tmp_path / "fake"
    target.mkdir()
    log = target / "install.log"
    install._install_pypi(PIN, target, log, str(broken))
    assert installed_answer(target) == "42"
    text = log.read_text()
    assert "uv: no index reachable" in text
    assert " -m pip install " in text
