"""Whatever PATH holds, the sandbox never shows a results folder, a suite or the user's repository.

Each test lays out a machine where such folders sit beside or under the tool folders on PATH
and looks from inside bubblewrap; a folder counts as seen when a file in it can be read.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.sandbox.sealed import MARKER, registered_results_folders
from harnessdrive.store.store import Store
from tests.sandboxes import Box, make_box, sandbox_of

SECRET = "SOLUTION-TEXT"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


@pytest.fixture(autouse=True)
def own_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Results folders made here register in a registry of this test's own."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def tool(folder: Path, name: str = "tool") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text("#!/bin/sh\necho tool ran\n")
    script.chmod(0o755)
    return script


def secret_file(folder: Path, name: str = "diff.patch") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"+ {SECRET}\n")
    return path


def results_folder(path: Path) -> Path:
    """A results folder as harnessdrive leaves it (marked and registered), with a diff in it."""
    store = Store(path)
    store.sync_index()
    store.close()
    secret_file(path / "trials" / "s" / "t" / "v" / "r1")
    return path


def legacy_results_folder(path: Path) -> Path:
    """One made before folders were marked: no marker, never registered, the same layout."""
    (path / "trials").mkdir(parents=True)
    (path / "index.sqlite").write_bytes(b"")
    secret_file(path / "trials")
    return path


def seen(box: Box, paths: list[Path], path_value: str, **kw: object) -> list[str]:
    """Which of ``paths`` (files) the sandboxed process can read."""
    script = "; ".join(f"cat {p} >/dev/null 2>&1 && echo SEEN {p}" for p in paths)
    result = box.run(script + "; true", env={"PATH": path_value})
    assert result.exit_code == 0, box.errors()
    return [line.split(" ", 1)[1] for line in box.output().splitlines() if line.startswith("SEEN")]


def make(tmp_path: Path, **kw: tuple[Path, ...]) -> Box:
    return make_box(tmp_path / "box", sandbox_of("bwrap", **kw))


def test_a_bin_folder_on_path_shows_its_tools_not_the_folders_beside_it(tmp_path: Path) -> None:
    prefix = tmp_path / "srv" / "me"
    tool(prefix / "bin")
    (prefix / "lib").mkdir()
    library = secret_file(prefix / "lib", "libtool.so")
    old_run = results_folder(prefix / "results-old")
    legacy = legacy_results_folder(prefix / "old-results")
    beside = secret_file(prefix / "notes")
    box = make(tmp_path)
    path = f"{prefix / 'bin'}:{SYSTEM_PATH}"
    result = box.run("tool", env={"PATH": path})
    assert box.output() == "tool ran\n", box.errors()
    assert result.exit_code == 0
    diff = old_run / "trials" / "s" / "t" / "v" / "r1" / "diff.patch"
    found = seen(box, [library, diff, legacy / "trials" / "diff.patch", beside], path)
    assert found == [str(library)]  # the prefix's lib comes with its bin, nothing else


def test_results_folders_inside_a_shown_folder_are_covered(tmp_path: Path) -> None:
    shown = tmp_path / "tools"
    tool(shown)
    registered = results_folder(shown / "results")
    legacy = legacy_results_folder(shown / "deep" / "er" / "legacy")
    suite = tmp_path / "tools" / "suites" / "mine"
    (suite / "suite.toml").parent.mkdir(parents=True)
    (suite / "suite.toml").write_text('name = "mine"\n')
    hidden_test = secret_file(suite / "tasks" / "t" / "hidden", "test_hidden.py")
    task = tmp_path / "tools" / "tasks" / "one"
    task.mkdir(parents=True)
    (task / "task.toml").write_text("id = 'one'\n")
    solution = secret_file(task / "solution", "calc.py")
    ordinary = secret_file(shown / "share", "data.txt")
    box = make(tmp_path)
    path = f"{shown}:{SYSTEM_PATH}"
    files = [
        registered / "trials" / "s" / "t" / "v" / "r1" / "diff.patch",
        legacy / "trials" / "diff.patch",
        hidden_test,
        solution,
        ordinary,
    ]
    assert seen(box, files, path) == [str(ordinary)]
    box.run("tool", env={"PATH": path})
    assert box.output() == "tool ran\n"


def test_this_runs_results_folder_is_covered_when_its_parent_is_on_path(tmp_path: Path) -> None:
    parent = tmp_path / "work"
    tool(parent)
    results = parent / "results"
    diff = secret_file(results / "trials")  # not marked yet: the run names it
    box = make(tmp_path, hidden=(results,))
    assert seen(box, [diff], f"{parent}:{SYSTEM_PATH}") == []


def test_home_on_path_shows_its_tool_folders_and_nothing_else(tmp_path: Path) -> None:
    home = tmp_path / "home" / "me"
    tool(home / ".local" / "bin", "local-tool")
    tool(home / "bin", "home-tool")
    key = secret_file(home / ".ssh", "id_rsa")
    old = results_folder(home / "projects" / "x" / ".harnessdrive")
    shared = results_folder(home / ".local" / "share" / "runs")
    box = make(tmp_path, private=(home,))
    path = f"{home}:{home / '.local' / 'bin'}:{home / 'bin'}:~/bin:.:relative::/:{SYSTEM_PATH}"
    result = box.run("local-tool && home-tool", env={"PATH": path})
    assert result.exit_code == 0, box.errors()
    assert box.output() == "tool ran\ntool ran\n"
    files = [
        key,
        old / "trials" / "s" / "t" / "v" / "r1" / "diff.patch",
        shared / "trials" / "s" / "t" / "v" / "r1" / "diff.patch",
    ]
    assert seen(box, files, path) == []


def test_the_users_repository_on_path_stays_out_of_sight(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    tool(repo / "bin", "repo-tool")
    tool(repo / "scripts", "script-tool")
    source = secret_file(repo, "calc.py")
    box = make(tmp_path, hidden=(repo,))
    path = f"{repo}:{repo / 'bin'}:{repo / 'scripts'}:{SYSTEM_PATH}"
    assert seen(box, [source, repo / "bin" / "repo-tool"], path) == []
    box.run("repo-tool || script-tool || echo none", env={"PATH": path})
    assert box.output().splitlines()[-1] == "none"


def test_a_path_entry_that_is_a_link_shows_where_it_points_without_the_parent(
    tmp_path: Path,
) -> None:
    prefix = tmp_path / "real" / "prefix"
    tool(prefix / "bin", "linked-tool")
    beside = secret_file(prefix / "results")
    link = tmp_path / "links" / "bin"
    link.parent.mkdir()
    link.symlink_to(prefix / "bin")
    box = make(tmp_path)
    path = f"{link}:{SYSTEM_PATH}"
    result = box.run("linked-tool", env={"PATH": path})
    assert result.exit_code == 0, box.errors()
    assert box.output() == "tool ran\n"
    assert seen(box, [beside], path) == []


def test_a_suite_under_a_prefix_on_path_stays_hidden(tmp_path: Path) -> None:
    prefix = tmp_path / "opt" / "kit"
    tool(prefix / "bin")
    suite = prefix / "share" / "suites" / "demo"
    (suite / "tasks" / "t").mkdir(parents=True)
    (suite / "suite.toml").write_text('name = "demo"\n')
    hidden_test = secret_file(suite / "tasks" / "t" / "hidden", "test_hidden.py")
    manual = secret_file(prefix / "share" / "doc", "README")
    box = make(tmp_path)
    assert seen(box, [hidden_test, manual], f"{prefix / 'bin'}:{SYSTEM_PATH}") == [str(manual)]


def test_covers_are_read_only(tmp_path: Path) -> None:
    shown = tmp_path / "tools"
    tool(shown)
    results = results_folder(shown / "results")
    box = make(tmp_path)
    result = box.run(
        f"echo x > {results}/planted 2>/dev/null && echo WROTE; true",
        env={"PATH": f"{shown}:{SYSTEM_PATH}"},
    )
    assert result.exit_code == 0
    assert "WROTE" not in box.output()


def test_results_folders_are_marked_and_registered_and_dropped_once_gone(tmp_path: Path) -> None:
    results = results_folder(tmp_path / "res")
    assert (results / MARKER).is_file()
    assert str(results) in registered_results_folders()
    for path in sorted(results.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    results.rmdir()
    assert str(results) not in registered_results_folders()
    assert not any(os.scandir(tmp_path / "state" / "harnessdrive" / "results-folders"))


def test_a_venvs_bin_on_path_brings_the_venv_and_nothing_beside_it(tmp_path: Path) -> None:
    venv = tmp_path / "project" / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    beside = secret_file(tmp_path / "project" / "results")
    box = make(tmp_path)
    path = f"{venv / 'bin'}:{SYSTEM_PATH}"
    result = box.run("python -c 'import sys; print(sys.prefix)'", env={"PATH": path})
    assert result.exit_code == 0, box.errors()
    assert box.output() == f"{venv}\n"  # pyvenv.cfg was seen: the venv, not its base Python
    assert seen(box, [beside], path) == []


def test_a_linked_program_brings_its_own_install_not_its_neighbours(tmp_path: Path) -> None:
    venvs = tmp_path / "pipx" / "venvs"
    target = tool(venvs / "black" / "bin", "black")
    (venvs / "black" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    data = secret_file(venvs / "black" / "lib", "black.py")
    other = results_folder(tmp_path / "pipx" / "results")
    bin_folder = tmp_path / "home" / ".local" / "bin"
    bin_folder.mkdir(parents=True)
    (bin_folder / "black").symlink_to(target)
    box = make(tmp_path)
    path = f"{bin_folder}:{SYSTEM_PATH}"
    result = box.run("black", env={"PATH": path})
    assert result.exit_code == 0, box.errors()
    assert box.output() == "tool ran\n"
    diff = other / "trials" / "s" / "t" / "v" / "r1" / "diff.patch"
    assert seen(box, [data, diff], path) == [str(data)]


def test_a_view_asked_again_covers_what_was_made_since_and_shows_new_tool_folders(
    tmp_path: Path,
) -> None:
    """Views are remembered between launches: what changed since must still count."""
    shown = tmp_path / "srv" / "tools"
    tool(shown)
    later_tools = tmp_path / "srv" / "later" / "bin"
    path = f"{shown}:{later_tools}:{SYSTEM_PATH}"
    box = make(tmp_path)
    first = box.run("tool", env={"PATH": path})  # the first view: nothing of ours there yet
    assert first.exit_code == 0, box.errors()
    results = results_folder(shown / "results")  # registered after that view was made
    tool(later_tools, "later")  # a PATH folder that did not exist then
    diff = results / "trials" / "s" / "t" / "v" / "r1" / "diff.patch"
    assert seen(box, [diff], path) == []
    result = box.run("later", env={"PATH": path})
    assert result.exit_code == 0, box.errors()
    assert box.output() == "tool ran\n"
