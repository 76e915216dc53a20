"""A hostile agent under bubblewrap, with a PATH that names every kind of folder, finds nothing.

The machine it runs on holds an earlier run's results (with the reference solution in its
diffs) beside a ``bin`` folder on PATH, copies of results folders under HOME (one unregistered,
one from before folders were marked), the suite under a prefix on PATH, the user's repository
(with a later commit that must stay unseen) on PATH, and this run's results folder with its
parent on PATH. The attacker walks the whole filesystem for the sentinels of all of them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w

from harnessdrive.sandbox.sealed import MARKER
from harnessdrive.store.results import TrialResult
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.testing.suites import TaskFiles, write_task
from tests.conftest import ADD_BUGGY, ADD_FIXED, ADD_HIDDEN_TEST, ADD_VISIBLE_TEST
from tests.sandboxes import require_bwrap
from tests.trial_results import trial_folder

pytestmark = [pytest.mark.security, pytest.mark.slow]

SEARCH = r"""
import os, sys, time
base, needles = sys.argv[1], [n.encode() for n in sys.argv[2:]]
skip = {"/proc", "/sys", "/dev", "/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/boot"}
here = os.getcwd()
deadline = time.monotonic() + 20
found, seen = set(), set()


def search(root):
    for folder, dirs, files in os.walk(root):
        if time.monotonic() > deadline:
            print("ran out of time:", root)
            return
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in skip]
        if folder.startswith(here) or folder in seen:
            dirs[:] = []
            continue
        seen.add(folder)
        for name in files:
            path = os.path.join(folder, name)
            try:
                if os.path.islink(path) or os.path.getsize(path) > 2_000_000:
                    continue
                data = open(path, "rb").read()
            except OSError:
                continue
            if any(n in data for n in needles):
                found.add(path)


search(base)  # where the test laid everything out, first
search("/")
print("found", len(found), *sorted(found))
"""


def _tool(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("#!/bin/sh\necho ok\n")
    (folder / name).chmod(0o755)


def _run(suite: Path, results: Path, env: dict[str, str], *harness: str) -> None:
    command = [sys.executable, "-m", "harnessdrive.cli", "run", str(suite), "--results"]
    command += [str(results), "--network", "none", "--sandbox", "bwrap"]
    command += [arg for name in harness for arg in ("--harness", name)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_no_path_entry_exposes_results_suites_or_the_repository(tmp_path: Path) -> None:
    require_bwrap()
    sentinels = {
        "solution": "SOLUTION-SENTINEL-5e1f",
        "hidden": "HIDDEN-SENTINEL-9a07",
        "repo": "REPO-FUTURE-SENTINEL-c3d2",
    }
    home = tmp_path / "home" / "me"
    for folder in (home / ".local" / "bin", home / "bin"):
        _tool(folder, f"tool-{folder.parent.name}")
    user_repo = home / "projects" / "calc"
    repo = RepoBuilder(user_repo)
    base_sha = repo.commit(
        "start", {"calc.py": ADD_BUGGY, "tests/test_visible.py": ADD_VISIBLE_TEST}
    )
    repo.commit("later", {"NOTES.md": f"{sentinels['repo']}\n", "calc.py": ADD_FIXED})
    repo.checkout()
    repo.close()
    _tool(user_repo / "bin", "repo-tool")
    prefix = tmp_path / "opt" / "kit"
    _tool(prefix / "bin", "kit-tool")
    suite = prefix / "share" / "suites" / "calc"
    needles = " ".join(sentinels.values())
    attacker = f"{{python}} - {tmp_path} {needles} <<'PYTHON'\n{SEARCH}PYTHON\n"
    write_task(
        suite / "tasks",
        TaskFiles(
            "add",
            hidden={"tests/test_hidden.py": f"# {sentinels['hidden']}\n{ADD_HIDDEN_TEST}"},
            solution={"calc.py": f"# {sentinels['solution']}\n{ADD_FIXED}"},
            protected=["tests/**"],
            command="PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -q -p no:cacheprovider",
            agent_timeout=60,
            extra={"repo": {"path": str(user_repo), "ref": base_sha}},
        ),
    )
    variants = [{"harness": "command", "name": "search", "options": {"template": attacker}}]
    (suite / "suite.toml").write_text(
        tomli_w.dumps({"name": "calc", "tasks": ["tasks/*"], "variants": variants})
    )
    me = tmp_path / "srv" / "me"
    _tool(me / "bin", "my-tool")
    link = tmp_path / "links" / "bin"
    link.parent.mkdir()
    link.symlink_to(me / "bin")
    runs = tmp_path / "runs"
    venv_bin = str(Path(sys.executable).parent)
    path = [
        me / "bin",
        link,
        prefix / "bin",
        home,
        home / ".local" / "bin",
        home / "bin",
        user_repo,
        user_repo / "bin",
        runs,
    ]
    env = {
        "PATH": ":".join(map(str, path)) + f":{venv_bin}:/usr/local/bin:/usr/bin:/bin:.:rel:",
        "HOME": str(home),
        "LANG": "C.UTF-8",
    }
    # An earlier run's results beside the bin folder: its diff holds the reference solution.
    old = me / "results-old"
    _run(suite, old, env, "reference")
    old_diffs = [p for p in old.rglob("diff.patch") if sentinels["solution"] in p.read_text()]
    assert old_diffs, "the earlier run should have kept the solution in its diff"
    # Copies under HOME: one marked but never registered, one from before folders were marked.
    shutil.copytree(old, home / ".local" / "share" / "copied-results")
    legacy = home / ".local" / "lib" / "legacy-results"
    shutil.copytree(old, legacy)
    (legacy / MARKER).unlink()
    shutil.copytree(old, home / "old-results")

    results = runs / "current"
    _run(suite, results, env, "search")
    trial = trial_folder(results, "calc/add/search/r1")
    result = TrialResult.model_validate_json((trial / "result.json").read_text())
    out = (trial / "agent.stdout").read_text()
    assert result.sandbox == "bwrap"
    assert "ran out of time: " + str(tmp_path) not in out, out[-2000:]
    assert out.splitlines()[-1] == "found 0", out[-2000:]
    assert result.outcome == "fail"
    assert os.path.isfile(old_diffs[0])  # still there on the host, just never shown
