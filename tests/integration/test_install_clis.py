"""The pinned CLIs: installed by ``harnessdrive install-clis``, found there, shown where found,
and a run whose requested harness never got to run exits non-zero with the install command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.cli.doctor import harness_infos
from harnessdrive.harnesses.cli.binaries import binary_variable
from harnessdrive.harnesses.cli.install import (
    CACHE_ENV,
    PINS,
    STAMP_NAME,
    search_caches,
    user_cache,
)
from harnessdrive.testing.suites import write_suite
from tests.conftest import GRADE_WITHOUT_RUNNER, add_task

FAKE_PI = "#!/bin/sh\necho 0.73.1\n"


def stamped(cache: Path, name: str, script: str) -> Path:
    """A finished install of one pin, as the installer leaves it (an executable and a stamp)."""
    pin = PINS[name]
    executable = cache / pin.folder_name / pin.executable
    executable.parent.mkdir(parents=True, exist_ok=True)
    executable.write_text(script)
    executable.chmod(0o755)
    stamp = {"package": pin.package, "version": pin.version}
    (cache / pin.folder_name / STAMP_NAME).write_text(json.dumps(stamp))
    return executable


def harnessdrive(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
        "COLUMNS": "400",
    }
    return subprocess.run(
        [sys.executable, "-m", "harnessdrive.cli", *args],
        env={**base, **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_cache_is_the_variable_else_the_user_cache(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert user_cache(env) == tmp_path / "xdg" / "harnessdrive" / "clis"
    assert search_caches(env)[0] == tmp_path / "xdg" / "harnessdrive" / "clis"
    assert user_cache({"HOME": str(tmp_path)}) == tmp_path / ".cache" / "harnessdrive" / "clis"
    assert search_caches({**env, CACHE_ENV: str(tmp_path / "c")}) == [tmp_path / "c"]


def test_install_clis_skips_a_stamped_install_and_says_where_it_is(tmp_path: Path) -> None:
    cache = tmp_path / "xdg" / "harnessdrive" / "clis"
    executable = stamped(cache, "pi", FAKE_PI)
    done = harnessdrive(tmp_path, "install-clis", "pi", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"pi {PINS['pi'].version}: already installed: {executable}"


def test_install_clis_refuses_an_unknown_name_in_one_line(tmp_path: Path) -> None:
    done = harnessdrive(tmp_path, "install-clis", "claud", XDG_CACHE_HOME=str(tmp_path / "x"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: no pinned CLI 'claud'; install-clis knows: claude, codex, gemini, opencode, pi, "
        "qwen, aider, mini-swe-agent"
    ]
    assert not (tmp_path / "x").exists()


def test_harnesses_and_doctor_say_where_each_cli_was_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    executable = stamped(cache, "pi", FAKE_PI)
    monkeypatch.setenv(CACHE_ENV, str(cache))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    for name in ("pi", "codex"):
        monkeypatch.delenv(binary_variable(name), raising=False)
    infos = {info.name: info for info in harness_infos()}
    assert infos["pi"].found == f"the pinned install (harnessdrive install-clis): {executable}"
    assert infos["pi"].version == "0.73.1"
    assert infos["codex"].found.startswith("not found; run `harnessdrive install-clis codex`")
    for command in ("harnesses", "doctor"):
        done = harnessdrive(tmp_path, command, **{CACHE_ENV: str(cache)})
        words = " ".join(done.stdout.split())
        assert "Found" in words and "the pinned install" in words, done.stdout
        assert "not found; run `harnessdrive" in words


@pytest.mark.slow
@pytest.mark.parametrize("command", ["demo", "run"])
def test_a_requested_harness_that_never_ran_fails_the_run_with_the_install_command(
    tmp_path: Path, command: str
) -> None:
    # One demo task is enough to show how the run ends; the whole demo is tested in test_demo.py.
    args = [command] if command == "run" else [command, "--task", "amount-parsing"]
    if command == "run":
        tasks = [add_task(name, command=GRADE_WITHOUT_RUNNER) for name in ("one", "two")]
        suite = write_suite(tmp_path / "suite", tasks)
        args += [str(suite), "--allow-unpriced", "claude", "--max-usd", "1"]
    args += ["--harness", "reference,claude", "--results", str(tmp_path / "results")]
    done = harnessdrive(tmp_path, *args, **{CACHE_ENV: str(tmp_path / "empty")})
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1:] == [
        "error: claude never got to run: run `harnessdrive install-clis claude`, put `claude` on "
        "PATH, or set $HARNESSDRIVE_CLAUDE_BINARY"
    ]
    assert os.path.isdir(tmp_path / "results" / "trials")  # and everything was recorded


@pytest.mark.slow
def test_a_run_where_every_harness_ran_exits_zero(tmp_path: Path) -> None:
    args = ["demo", "--harness", "reference", "--task", "amount-parsing"]
    args += ["--results", str(tmp_path / "results")]
    done = harnessdrive(tmp_path, *args, **{CACHE_ENV: str(tmp_path / "empty")})
    assert done.returncode == 0, done.stderr
