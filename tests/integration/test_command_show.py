"""The ``command`` harness names a path the sandbox does not show, and ``show`` shows it.

The agent's script lives outside the repository, under the host's /tmp (every pytest folder
does) or the real HOME, which no bubblewrap sandbox shows unless asked.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.store.results import TrialResult
from harnessdrive.testing.suites import write_suite
from tests.conftest import ADD_FIXED, add_task
from tests.sandboxes import require_bwrap
from tests.trial_results import trial_folder

pytestmark = pytest.mark.slow


@pytest.fixture
def machine(tmp_path: Path) -> dict[str, Path]:
    require_bwrap()
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / "fix.sh").write_text(f"cat > calc.py <<'EOF'\n{ADD_FIXED}EOF\n")
    (kit / "files").mkdir()
    (kit / "files" / "calc.py").write_text(ADD_FIXED)
    home = tmp_path / "home"
    home.mkdir()
    (home / "fix.sh").write_text((kit / "fix.sh").read_text())
    return {"kit": kit, "home": home, "tmp": tmp_path}


def harnessdrive(machine: dict[str, Path], *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(machine["home"]),
        "LANG": "C.UTF-8",
    }
    command = [sys.executable, "-m", "harnessdrive.cli", "run", *args, "--sandbox", "bwrap"]
    return subprocess.run(
        command, env=env, cwd=machine["tmp"], capture_output=True, text=True, timeout=600
    )


def result(results: Path, variant: str) -> TrialResult:
    path = trial_folder(results, f"suite/add/{variant}/r1") / "result.json"
    return TrialResult.model_validate_json(path.read_text())


def test_unseen_paths_are_named_with_the_fix_and_show_makes_them_visible(
    machine: dict[str, Path],
) -> None:
    kit = machine["kit"]
    variants = [
        {"harness": "command", "name": "tmp-script", "options": {"template": f"bash {kit}/fix.sh"}},
        {"harness": "command", "name": "copy", "options": {"template": f"cp -r {kit}/files/. ."}},
        {"harness": "command", "name": "home", "options": {"template": "bash ~/fix.sh"}},
        {
            "harness": "command",
            "name": "shown",
            "options": {"template": f"bash {kit}/fix.sh", "show": [str(kit)]},
        },
    ]
    suite = write_suite(machine["tmp"] / "s", [add_task("add")], variants=variants)
    results = machine["tmp"] / "results"
    done = harnessdrive(machine, str(suite), "--results", str(results))
    assert done.returncode == 1, done.stderr  # two harnesses never got to run
    for name, written in (("tmp-script", f"{kit}/fix.sh"), ("copy", f"{kit}/files/.")):
        trial = result(results, name)
        # A script that could not start never ran; a copy that ran and failed is graded (only
        # evidence from outside the sandbox, not an error exit, makes a trial "not run").
        expected = ("could_not_run", "not_graded") if name == "tmp-script" else ("crashed", "fail")
        assert (trial.status, trial.outcome) == expected, name
        hint = trial.agent.hint or ""
        assert f"`{written}` exists here but the sandbox does not show it" in hint, hint
        assert "a /tmp of its own" in hint and f"--show {kit}" in hint
        assert "install `" not in hint
    home = result(results, "home").agent.hint or ""
    assert "`~/fix.sh` exists here" in home and "the trial's own HOME" in home, home
    shown = result(results, "shown")
    assert (shown.status, shown.outcome) == ("completed", "pass")


def test_show_on_the_command_line_shows_a_folder_read_only(machine: dict[str, Path]) -> None:
    kit = machine["kit"]
    template = f"cp -r {kit}/files/. . && touch {kit}/written-by-agent; bash {kit}/fix.sh"
    variants = [{"harness": "command", "name": "tmp-script", "options": {"template": template}}]
    suite = write_suite(machine["tmp"] / "s", [add_task("add")], variants=variants)
    results = machine["tmp"] / "results"
    done = harnessdrive(machine, str(suite), "--results", str(results), "--show", str(kit))
    assert done.returncode == 0, done.stderr
    trial = result(results, "tmp-script")
    assert (trial.status, trial.outcome) == ("completed", "pass")
    assert not (kit / "written-by-agent").exists()


@pytest.mark.parametrize("what", ["results", "suite", "hidden", "home", "inside-results"])
def test_show_refuses_what_would_expose_results_suite_or_hidden_files(
    machine: dict[str, Path], what: str
) -> None:
    variants = [{"harness": "command", "name": "agent", "options": {"template": "true"}}]
    suite = write_suite(machine["tmp"] / "s", [add_task("add")], variants=variants)
    results = machine["tmp"] / "results"
    (results / "trials").mkdir(parents=True)
    target = {
        "results": results,
        "suite": suite,
        "hidden": next(suite.rglob("test_hidden.py")),
        "home": machine["home"].parent,
        "inside-results": results / "trials",
    }[what]
    done = harnessdrive(machine, str(suite), "--results", str(results), "--show", str(target))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: shown path {target}: would show")
    assert lines[0].endswith("(--show)")


def test_a_variants_show_is_checked_before_the_run(machine: dict[str, Path]) -> None:
    suite_folder = machine["tmp"] / "s"
    variants = [
        {
            "harness": "command",
            "name": "agent",
            "options": {"template": "true", "show": [str(suite_folder)]},
        }
    ]
    suite = write_suite(suite_folder, [add_task("add")], variants=variants)
    results = machine["tmp"] / "results"
    done = harnessdrive(machine, str(suite), "--results", str(results))
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: variant agent: show {suite_folder}: would show")
    assert not results.exists()
