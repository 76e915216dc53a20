"""Without a working bubblewrap, ``--sandbox auto`` never quietly runs agent code unprotected.

bubblewrap is made missing the way harnessdrive finds it: a PATH without ``bwrap``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w

from harnessdrive.testing.suites import write_task
from tests.conftest import add_task
from tests.sandboxes import path_without_bwrap

pytestmark = pytest.mark.slow


def harnessdrive(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": path_without_bwrap(tmp_path / "bin"),
        "HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
    }
    return subprocess.run(
        [sys.executable, "-m", "harnessdrive.cli", *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    write_task(folder / "tasks", add_task())
    variants = [{"harness": "command", "name": "mine", "options": {"template": "true"}}]
    (folder / "suite.toml").write_text(
        tomli_w.dumps({"name": "s", "tasks": ["tasks/*"], "variants": variants})
    )
    return folder


@pytest.mark.parametrize("harness", ["mine", "claude", "reference,codex"])
def test_auto_refuses_agent_code_in_one_line_before_anything_runs(
    tmp_path: Path, suite: Path, harness: str
) -> None:
    results = tmp_path / "results"
    done = harnessdrive(
        tmp_path, "run", str(suite), "--harness", harness, "--results", str(results)
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "bubblewrap" in lines[0] and "--sandbox none" in lines[0]
    assert "apt-get install bubblewrap" in lines[0]
    assert not results.exists()


def test_a_real_cli_in_the_demo_is_refused_too(tmp_path: Path) -> None:
    results = tmp_path / "results"
    done = harnessdrive(tmp_path, "demo", "--harness", "claude", "--results", str(results))
    assert done.returncode == 2, done.stderr
    assert "claude would run unprotected" in done.stderr
    assert not results.exists()


def test_sandbox_none_said_outright_still_runs(tmp_path: Path, suite: Path) -> None:
    results = tmp_path / "results"
    args = ["run", str(suite), "--harness", "mine", "--results", str(results), "--sandbox", "none"]
    done = harnessdrive(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert "sandbox: none" in done.stdout


def test_the_scripted_demo_runs_without_a_sandbox_and_says_so(tmp_path: Path) -> None:
    # One demo task is enough to show it runs; the whole demo is tested in test_demo.py.
    args = ["demo", "--harness", "reference,noop", "--task", "amount-parsing"]
    args += ["--results", str(tmp_path / "results")]
    done = harnessdrive(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert "sandbox: none" in done.stdout
    assert "Ran without a sandbox" in done.stdout


def test_doctor_says_what_auto_does_here(tmp_path: Path) -> None:
    done = harnessdrive(tmp_path, "doctor")
    # A table cell may wrap onto the next row: read the words, not the box around them.
    text = " ".join(re.sub(r"[\u2500-\u257f|]", " ", done.stdout).split())
    assert "auto refuses real agent CLIs and command templates" in text
    assert "scripted agents (the demo) still run" in text
