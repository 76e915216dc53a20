"""A suite run whose agents leave hostile content: every trial is graded and recorded.

One harness writes files with unusual names, one clones a repository into its workspace, one
writes a 2 GB sparse file, one prints far more than is kept, and ``reference`` solves the task.
The run finishes, each trial is graded (``fail`` for the four, ``pass`` for the reference),
``report`` and ``report --json`` carry the names, and the same command again runs nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w

from harnessdrive.store.results import TrialResult
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.testing.suites import write_suite, write_task
from harnessdrive.workspace.names import name_bytes, name_from_json, shown
from tests.conftest import add_task
from tests.trial_results import trial_folder

WRONG = "printf 'def add(a, b):\\n    return 0\\n' > calc.py\n"
NAMES = (
    b"bad\xff\xfe.py",
    b"new\nline.txt",
    b"-rf",
    b"--force",
    b" sp ace ",
    b"q'\"uote",
    b"back\\slash",
    b"*.py",
    b":(exclude)x",
    b"L" * 255,
    b"/".join([b"d"] * 60) + b"/deep.txt",
)
FIFO = b"fifo\xff\nname"
NAMES_AGENT = (
    WRONG
    + "{python} - <<'PY'\nimport os\n"
    + f"names = {list(NAMES)!r}\n"
    + "for name in names:\n"
    + "    os.makedirs(os.path.dirname(name) or b'.', exist_ok=True)\n"
    + "    open(name, 'wb').write(b'x' + name + b'\\n')\n"
    + f"os.mkfifo({FIFO!r})\n"
    + "PY\n"
)
CLONE_AGENT = (
    WRONG
    + "set -e\norigin=$TMPDIR/origin\ngit init -q $origin\n"
    + "printf 'raise SystemExit(0)\\n' > $origin/conftest.py\n"
    + "git -C $origin add -A\n"
    + "git -C $origin -c user.name=a -c user.email=a@a commit -qm dep\n"
    + "git clone -q $origin vendor/dep\n"
)
SPARSE_AGENT = WRONG + "truncate -s 2G huge.bin\n"
FLOOD_AGENT = WRONG + "head -c 40000000 /dev/zero | tr '\\0' 'y'\nhead -c 9000000 /dev/zero >&2\n"
VARIANTS = {
    "names": NAMES_AGENT,
    "clone": CLONE_AGENT,
    "sparse": SPARSE_AGENT,
    "flood": FLOOD_AGENT,
}


def _harnessdrive(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "harnessdrive.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def _folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@pytest.mark.slow
def test_hostile_content_is_graded_recorded_reported_and_never_run_again(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    write_task(suite / "tasks", add_task())
    variants = [
        {"harness": "command", "name": name, "options": {"template": template}}
        for name, template in VARIANTS.items()
    ]
    variants.append({"harness": "reference"})
    (suite / "suite.toml").write_text(
        tomli_w.dumps({"name": "suite", "tasks": ["tasks/*"], "variants": variants})
    )
    results = tmp_path / "results"
    run = _harnessdrive("run", str(suite), "--results", str(results), "--network", "none")
    assert run.returncode == 0, run.stderr[-2000:]

    trials = trial_folder(results, "suite/add/reference/r1").parent.parent
    recorded = {
        folder.name: TrialResult.model_validate(
            json.loads((folder / "r1" / "result.json").read_text())
        )
        for folder in trials.iterdir()
    }
    assert sorted(recorded) == sorted([*VARIANTS, "reference"])
    assert recorded["reference"].outcome == "pass"
    for name in VARIANTS:
        result = recorded[name]
        assert (result.status, result.outcome) == ("completed", "fail"), (name, result)
        assert result.grading is not None and result.grading.hidden is not None
        assert result.grading.hidden.total > 0

    names = recorded["names"]
    assert {name_bytes(p) for p in names.diff.paths} == {*NAMES, b"calc.py"}
    assert names.grading is not None
    assert [(name_bytes(i.path or ""), i.code) for i in names.grading.left_out] == [
        (FIFO, "special-file")
    ]
    clone = recorded["clone"]
    assert clone.grading is not None
    assert [(i.path, i.code) for i in clone.grading.left_out] == [
        ("vendor/dep", "nested-repository")
    ]
    assert clone.grading.findings == ()  # the forcing conftest.py inside it was never carried
    sparse = recorded["sparse"]
    assert sparse.grading is not None
    assert [(i.path, i.code) for i in sparse.grading.left_out] == [("huge.bin", "oversized-file")]
    flood = recorded["flood"].agent
    assert flood.stdout is not None and flood.stdout.cut
    assert flood.stdout.bytes_written == 40_000_000
    assert flood.stderr is not None and flood.stderr.bytes_written == 9_000_000
    assert (trials / "flood" / "r1" / "agent.stdout").stat().st_size < 5 * 1024 * 1024
    for name in recorded:
        assert _folder_size(trials / name) < 20 * 1024 * 1024, name

    text = _harnessdrive("report", "--results", str(results))
    assert text.returncode == 0, text.stderr
    fifo_shown = shown(FIFO.decode("utf-8", "surrogateescape"))
    assert f"left out (special-file) {fifo_shown}" in text.stdout
    assert "left out (nested-repository) vendor/dep" in text.stdout
    as_json = _harnessdrive("report", "--results", str(results), "--json")
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    by_variant = {row["variant"]: row for row in report["trials"]}
    assert {name_bytes(str(name_from_json(p))) for p in by_variant["names"]["paths"]} == {
        *NAMES,
        b"calc.py",
    }
    assert {row["variant"] for row in report["harnesses"]} == {*VARIANTS, "reference"}

    before = {p: p.read_bytes() for p in results.glob("trials/**/result.json")}
    again = _harnessdrive("run", str(suite), "--results", str(results), "--network", "none")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "already recorded" in again.stderr
    assert {p: p.read_bytes() for p in results.glob("trials/**/result.json")} == before
    assert not list(results.glob("trials/**/previous"))


@pytest.mark.slow
def test_a_machinery_failure_says_which_machinery_failed(tmp_path: Path) -> None:
    """A snapshot that cannot be built is the machinery's failure, named in every report."""
    repo = RepoBuilder(tmp_path / "user-repo")
    repo.commit("start", {"calc.py": "def add(a, b):\n    return a - b\n"})
    repo.checkout()
    repo.close()
    # A partial clone lacks old file contents: the snapshot refuses to build from it.
    subprocess.run(
        ["git", "-C", str(tmp_path / "user-repo"), "config", "extensions.partialClone", "origin"],
        check=True,
    )
    suite = write_suite(
        tmp_path, [add_task(extra={"repo": {"path": str(tmp_path / "user-repo"), "ref": "HEAD"}})]
    )
    results = tmp_path / "results"
    run = _harnessdrive("run", str(suite), "--results", str(results), "--cmd", "agent=true")
    # Its only harness never got to run: the exit status says so, with the failed stage.
    assert run.returncode == 1, run.stderr[-2000:]
    assert "agent never got to run: snapshot build failed: " in run.stderr
    result = TrialResult.model_validate_json(
        (trial_folder(results, "suite/add/agent/r1") / "result.json").read_text()
    )
    assert (result.status, result.outcome) == ("could_not_run", "not_graded")
    assert (result.agent.error or "").startswith("snapshot build failed: ")
    assert "partial clone" in (result.agent.error or "")
    assert (
        result.note == "an infrastructure failure (snapshot build); not counted against the harness"
    )
    report = json.loads(_harnessdrive("report", "--results", str(results), "--json").stdout)
    assert report["could_not_run"][0]["first_error"].startswith("snapshot build failed: ")
    assert report["trials"][0]["error"].startswith("snapshot build failed: ")
