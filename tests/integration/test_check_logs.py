"""``check`` keeps its logs only when asked (``--keep-logs``), and then says where they are."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from harnessdrive.checking.cases import LOGS_PREFIX
from harnessdrive.cli.app import run_cli
from harnessdrive.testing.suites import TaskFiles, write_suite


def _suite(folder: Path, *, broken: bool) -> Path:
    fixed = "a - b" if broken else "a + b"
    task = TaskFiles(
        "add",
        files={"calc.py": "def add(a, b):\n    return a - b\n"},
        solution={"calc.py": f"def add(a, b):\n    return {fixed}\n"},
        command="grep -q 'a + b' calc.py",
    )
    return write_suite(folder, [task])


@pytest.fixture
def temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))  # where check makes its logs folder
    monkeypatch.setattr(tempfile, "tempdir", None)
    return folder


def _logs(temporary: Path) -> list[Path]:
    return sorted(temporary.glob(LOGS_PREFIX + "*"))


def test_a_check_removes_its_logs_unless_asked_to_keep_them(
    tmp_path: Path, temporary: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _suite(tmp_path / "good", broken=False)
    assert run_cli(["check", str(good), "--sandbox", "none", "--jobs", "1"]) == 0
    assert "grades correctly" in capsys.readouterr().out
    assert _logs(temporary) == []

    bad = _suite(tmp_path / "bad", broken=True)
    assert run_cli(["check", str(bad), "--sandbox", "none", "--jobs", "1"]) == 1
    out = capsys.readouterr().out
    assert "broken" in out and "--keep-logs" in out
    assert _logs(temporary) == []


def test_a_failing_check_that_keeps_its_logs_says_where_they_are(
    tmp_path: Path, temporary: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _suite(tmp_path / "bad", broken=True)
    args = ["check", str(bad), "--sandbox", "none", "--jobs", "1", "--keep-logs"]
    assert run_cli(args) == 1
    out = capsys.readouterr().out
    (logs,) = _logs(temporary)
    assert f"Logs of every case: {logs}" in " ".join(out.split())
    assert (logs / "add" / "reference" / "grade-tests.log").is_file()

    assert run_cli([*args, "--json"]) == 1
    captured = capsys.readouterr()
    kept = [p for p in _logs(temporary) if p != logs]
    assert len(kept) == 1 and f"Logs of every case: {kept[0]}" in captured.err
