"""``harnessdrive mine`` from the command line: bad input, awkward repositories, setup commands."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.mining.suite_folder import default_suite_folder
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.repo_builder import LFS_ATTRIBUTES, Gitlink, RepoBuilder, lfs_pointer
from harnessdrive.testing.suites import FAST_PYTEST
from tests.waiting import DEADLINE, descendants_running, wait_until

APP = (
    "def double(x):\n    return x\n\n\ndef triple(x):\n    return x\n\n\ndef one():\n    return 0\n"
)
DOUBLE_FIXED = APP.replace("def double(x):\n    return x", "def double(x):\n    return 2 * x")


def pytest_file(name: str, assertion: str) -> str:
    return f"import app\n\n\ndef test_{name}():\n    assert {assertion}\n"


def small_history(path: Path) -> RepoBuilder:
    """A base commit and one good candidate (``double``)."""
    repo = RepoBuilder(path)
    repo.commit(
        "Start", {"app.py": APP, "tests/test_base.py": pytest_file("base", "app.one() == 0")}
    )
    repo.commit(
        "Fix double",
        {
            "app.py": DOUBLE_FIXED,
            "tests/test_double.py": pytest_file("double", "app.double(2) == 4"),
        },
    )
    return repo


def mine(*args: str) -> int:
    return run_cli(["mine", *args, "--since", "2000-01-01", "--sandbox", "none"])


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    return err.splitlines()[0]


# --- bad input: one clear line, exit 2 -------------------------------------------------------


def test_a_folder_that_is_not_a_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert mine(str(tmp_path), "--test-cmd", "true") == 2
    assert error_line(capsys) == f"error: {tmp_path} is not a git repository"


@pytest.mark.parametrize("since", ["a year", "12", "2026-02-30", "365days"])
def test_a_bad_since(tmp_path: Path, since: str, capsys: pytest.CaptureFixture[str]) -> None:
    small_history(tmp_path / "repo").close()
    assert run_cli(["mine", str(tmp_path / "repo"), "--since", since, "--test-cmd", "true"]) == 2
    line = error_line(capsys)
    assert line.startswith("error: the history start") and line.endswith("(--since)")


def test_no_test_command_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Start", {"main.c": "int main(void) { return 0; }\n"})
    repo.checkout()
    repo.close()
    assert mine(str(tmp_path / "repo")) == 2
    line = error_line(capsys)
    assert line.startswith("error: found no test command in ") and "(--test-cmd CMD)" in line


@pytest.mark.parametrize(
    ("command", "timeout", "words", "last"),
    [
        (
            "echo first line; echo the last words; exit 3",
            "60",
            "the test command fails in a fresh copy of HEAD",
            "the last words",
        ),
        ("echo waiting; sleep 30", "1", "times out after 1 s in a fresh copy of HEAD", "waiting"),
    ],
)
def test_a_test_command_that_does_not_pass_at_head(
    tmp_path: Path,
    command: str,
    timeout: str,
    words: str,
    last: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    small_history(tmp_path / "repo").close()
    out = tmp_path / "suite"
    argv = ["--validate", "--test-cmd", command, "--test-timeout", timeout, "-o", str(out)]
    assert mine(str(tmp_path / "repo"), *argv) == 2
    err = capsys.readouterr().err
    assert words in err.splitlines()[0]
    assert f"Full output: {out / 'logs' / 'head-check.log'}" in err
    assert err.rstrip().splitlines()[-1].strip() == last  # the output's last lines end it
    assert (out / "logs" / "head-check.log").is_file()
    assert not (out / "suite.toml").exists()
    # The folder is ours now: the next run may write into it, and meets the same problem.
    assert mine(str(tmp_path / "repo"), *argv) == 2
    assert words in capsys.readouterr().err.splitlines()[0]


def test_a_partial_clone_is_refused_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    origin = small_history(tmp_path / "origin")
    clone = origin.partial_clone(tmp_path / "clone")
    origin.close()
    assert mine(str(clone), "--test-cmd", "true") == 2
    line = error_line(capsys)
    assert "is a partial clone" in line and "git fetch --refetch origin" in line


@pytest.mark.parametrize("flag", [["--max", "0"], ["--jobs", "0"], ["--test-timeout", "0"]])
def test_numbers_out_of_range(
    tmp_path: Path, flag: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    small_history(tmp_path / "repo").close()
    assert mine(str(tmp_path / "repo"), "--test-cmd", "true", *flag) == 2
    assert error_line(capsys).endswith(f"({flag[0]})")


def test_a_folder_mining_did_not_write_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small_history(tmp_path / "repo").close()
    notes = tmp_path / "elsewhere" / "notes.txt"
    notes.parent.mkdir()
    notes.write_text("mine\n")
    argv = ["--validate", "--test-cmd", "true", "-o", str(notes.parent)]
    assert mine(str(tmp_path / "repo"), *argv) == 2
    assert "mining did not write" in error_line(capsys)
    assert sorted(p.name for p in notes.parent.iterdir()) == ["notes.txt"]


# --- output ----------------------------------------------------------------------------------


def test_without_validate_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small_history(tmp_path / "repo").checkout()
    assert mine(str(tmp_path / "repo"), "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["test_cmd"] == ".venv/bin/python -m pytest -q"  # detected; the copy's env
    assert summary["test_cmd_source"] == "test files in tests/"
    assert [t["subject"] for t in summary["tasks"]] == ["Fix double"]
    assert summary["tasks_file"] is None and summary["counts"]["checked"] == 0
    assert not (tmp_path / "repo" / ".harnessdrive").exists()


@pytest.mark.slow
def test_the_setup_command_wins_and_runs_in_every_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = small_history(tmp_path / "repo")
    # From here on every test needs what the setup command makes: a copy without it fails.
    conftest = "import pathlib\n\nassert pathlib.Path('made-by-setup').exists()\n"
    repo.commit("Need the setup", {"tests/conftest.py": conftest})
    repo.commit(
        "Fix triple",
        {
            "app.py": DOUBLE_FIXED.replace("return x\n\n\ndef one", "return 3 * x\n\n\ndef one"),
            "tests/test_triple.py": pytest_file("triple", "app.triple(2) == 6"),
        },
    )
    repo.close()
    out = tmp_path / "suite"
    setup = "echo made > made-by-setup"
    argv = ["--validate", "--test-cmd", FAST_PYTEST, "--setup-cmd", setup, "-o", str(out), "--json"]
    assert mine(str(tmp_path / "repo"), *argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["setup_cmd"] == setup
    assert [t["subject"] for t in summary["tasks"]] == ["Fix triple", "Fix double"]
    suite = load_suite(out)
    assert {t.spec.setup.commands for t in suite.tasks} == {(setup,)}
    assert not (out / "envs").exists()  # the setup command wins: no shared environment
    # The next step the summary suggests is a command that works on the suite just written.
    program, *next_step = shlex.split(summary["next_step"])
    assert program == "harnessdrive"
    assert run_cli([*next_step, "--results", str(tmp_path / "results")]) == 0
    assert "unknown" not in capsys.readouterr().out


@pytest.mark.slow
def test_awkward_repositories_mine_without_crashing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shallow clone, a Git LFS pointer, a submodule and file names that are not UTF-8."""
    origin = RepoBuilder(tmp_path / "origin")
    origin.commit(
        "Start",
        {
            "app.py": APP,
            "tests/test_base.py": pytest_file("base", "callable(app.one)"),
            ".gitattributes": LFS_ATTRIBUTES,
            "assets/data.bin": lfs_pointer(b"real data\n"),
            "vendor/lib": Gitlink("1" * 40),
        },
    )
    app = APP.replace("return 0", "return 1")
    origin.commit(
        "Fix one", {"app.py": app, "tests/test_one.py": pytest_file("one", "app.one() == 1")}
    )
    reader = app + (
        "\n\ndef data():\n    with open('assets/data.bin', 'rb') as handle:\n"
        "        return handle.read()\n"
    )
    origin.commit(
        "Read the data",
        {
            "app.py": reader,
            "tests/test_data.py": pytest_file("data", "app.data() == b'real data\\n'"),
        },
    )
    # Copies hold the pointer, not the content: say so, so that later commits pass.
    pointer = "app.data().startswith(b'version https://git-lfs')"
    origin.commit("Test what copies hold", {"tests/test_data.py": pytest_file("data", pointer)})
    app = reader.replace("return x\n\n\ndef one", "return 3 * x\n\n\ndef one")
    submodule = origin.commit(
        "Bump vendor and fix triple",
        {
            "app.py": app,
            "vendor/lib": Gitlink("2" * 40),
            "tests/test_triple.py": pytest_file("triple", "app.triple(2) == 6"),
        },
    )
    # pytest cannot write a junit report that names a test module whose name is not UTF-8, so
    # the odd names here belong to a test's data file and to a file of the fix.
    test = (
        "import os\n\nimport app\n\n\ndef test_double():\n"
        "    assert os.listdir(b'tests/data') == [b'caf\\xe9.txt']\n"
        "    assert app.double(2) == 4\n"
    )
    odd = origin.commit(
        "Fix double",
        {
            "app.py": app.replace(
                "def double(x):\n    return x", "def double(x):\n    return 2 * x"
            ),
            b"notes/caf\xe9.txt": b"not UTF-8\n",
            b"tests/data/caf\xe9.txt": b"2\n",
            "tests/test_double.py": test,
        },
    )
    clone = origin.shallow_clone(tmp_path / "clone", depth=5)
    origin.close()
    assert mine(str(clone), "--validate", "--test-cmd", FAST_PYTEST, "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["shallow"] is True
    # The clone's oldest commit has no parent in it.
    assert summary["counts"]["skipped"] == {"first commit": 1, "no source changes": 1}
    assert [t["commit"] for t in summary["tasks"]] == [odd, submodule]
    # Only the LFS pointer is copied, so the test that needs the real file fails with the fix.
    assert summary["counts"]["rejected"] == {"tests fail with the fix": 1}
    suite = load_suite(default_suite_folder(clone))
    task = next(t for t in suite.tasks if t.id == odd[:12])
    hidden = sorted(h.target.encode("utf-8", "surrogateescape") for h in task.hidden)
    assert hidden == [b"tests/data/caf\xe9.txt", b"tests/test_double.py"]
    assert b"notes/caf\xe9.txt" in (task.folder / "solution" / "solution.patch").read_bytes()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True)
    assert status.returncode == 0 and status.stdout == b""


def test_a_stop_signal_ends_the_tests_removes_the_copies_and_exits_130(tmp_path: Path) -> None:
    repo = small_history(tmp_path / "repo")
    repo.commit("Ready", {"ready": "yes\n"})  # only HEAD has it: every older copy hangs
    repo.close()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "suite"
    argv = ["mine", str(tmp_path / "repo"), "--since", "2000-01-01", "--validate", "-o", str(out)]
    argv += ["--test-cmd", "test -f ready || sleep 60", "--sandbox", "none"]
    process = subprocess.Popen(
        [sys.executable, "-m", "harnessdrive", *argv],
        env={**os.environ, "TMPDIR": str(tmp)},
        stderr=subprocess.PIPE,
        text=True,
    )
    # A copy's tests are running (only HEAD's would finish at once).
    wait_until(
        lambda: descendants_running(process.pid, ["sleep", "60"]),
        "a test command at work in a copy",
        process=process,
    )
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=DEADLINE)
    assert process.returncode == 130, err
    assert "Stopped." in err
    assert list(tmp.iterdir()) == []  # every copy is gone
    assert not (out / "staging").exists() and not (out / "suite.toml").exists()
