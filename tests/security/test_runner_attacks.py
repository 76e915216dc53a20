"""Attacks on the test runner: every one ends ``tampered``, an honest change still passes.

One ``harnessdrive run`` per sandbox back-end holds a pytest task and a unittest task, an honest
agent and every attacker of runner_attacks.py. The verdict defences do not depend on the
sandbox, so both back-ends must give the same verdicts.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w

from harnessdrive.store.results import TrialResult
from harnessdrive.testing.suites import TaskFiles, write_task
from tests.conftest import ADD_BUGGY, ADD_FIXED, ADD_HIDDEN_TEST, ADD_VISIBLE_TEST
from tests.sandboxes import require_bwrap
from tests.security.runner_attacks import HONEST, RUNNER_ATTACKS
from tests.trial_results import trial_folder

# One worker runs the module, so its shared fixtures are built once (tests/conftest.py).
pytestmark = [pytest.mark.security, pytest.mark.slow, pytest.mark.xdist_group("runner-attacks")]

UNITTEST_VISIBLE = (
    "import unittest\nfrom calc import add\n\n\nclass TestSmall(unittest.TestCase):\n"
    "    def test_small(self):\n        self.assertEqual(add(1, 1), 2)\n"
)
UNITTEST_HIDDEN = (
    "import unittest\nfrom calc import add\n\n\nclass TestSpec(unittest.TestCase):\n"
    "    def test_more(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
    "    def test_negative(self):\n        self.assertEqual(add(-2, 1), -1)\n"
)
# A bare `python`, as a task author would write it; nothing turns plugin autoload off here.
COMMANDS = {
    "pytest": "python -m pytest -q -p no:cacheprovider",
    "unittest": "python -m unittest discover -s tests",
}


def _task(runner: str) -> TaskFiles:
    visible, hidden = (
        (ADD_VISIBLE_TEST, ADD_HIDDEN_TEST)
        if runner == "pytest"
        else (UNITTEST_VISIBLE, UNITTEST_HIDDEN)
    )
    return TaskFiles(
        runner,
        files={"calc.py": ADD_BUGGY, "tests/test_visible.py": visible},
        hidden={"tests/test_hidden.py": hidden},
        solution={"calc.py": ADD_FIXED},
        protected=["tests/**"],
        command=COMMANDS[runner],
        visible_command=COMMANDS[runner],
        prompt="Fix the add function in calc.py so that the tests pass.",
        agent_timeout=40,
    )


@pytest.fixture(scope="module", params=["bwrap", "none"])
def runner_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    kind = request.param
    if kind == "bwrap":
        require_bwrap()
    base = tmp_path_factory.mktemp(f"runner-attacks-{kind}")
    suite = base / "suite"
    for runner in COMMANDS:
        write_task(suite / "tasks", _task(runner))
    variants = [{"harness": "command", "name": "honest", "options": {"template": HONEST}}]
    variants += [
        {"harness": "command", "name": a.name, "options": {"template": a.template}}
        for a in RUNNER_ATTACKS
    ]
    (suite / "suite.toml").write_text(
        tomli_w.dumps({"name": "suite", "tasks": ["tasks/*"], "variants": variants})
    )
    results = base / "results"
    venv_bin = str(Path(sys.executable).parent)
    env = {"PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin", "HOME": str(base), "LANG": "C.UTF-8"}
    done = subprocess.run(
        [sys.executable, "-m", "harnessdrive.cli", "run", str(suite), "--results", str(results),
         "--jobs", "3", "--network", "none", "--sandbox", kind],
        env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return results


def _result(results: Path, task: str, variant: str) -> TrialResult:
    path = trial_folder(results, f"suite/{task}/{variant}/r1") / "result.json"
    return TrialResult.model_validate_json(path.read_text())


def test_every_runner_attack_is_tampered_and_the_honest_change_passes(runner_run: Path) -> None:
    problems = []
    lines = []
    for runner in COMMANDS:
        honest = _result(runner_run, runner, "honest")
        if honest.outcome != "pass":
            problems.append(f"{runner}: the honest change got {honest.outcome}")
        for attack in RUNNER_ATTACKS:
            result = _result(runner_run, runner, attack.name)
            found = {f.code for f in result.grading.findings} if result.grading else set()
            lines.append(f"{runner:8} {attack.name:26} {result.outcome:9} {sorted(found)}")
            if result.outcome != "tampered":
                problems.append(f"{runner}/{attack.name}: {result.outcome} ({sorted(found)})")
            elif not attack.codes[runner] <= found:
                problems.append(f"{runner}/{attack.name}: findings {sorted(found)}")
    print("\n" + "\n".join(lines))
    assert not problems, problems


def test_the_honest_unittest_run_counts_each_test_from_our_junit_report(runner_run: Path) -> None:
    hidden = _result(runner_run, "unittest", "honest").grading
    assert hidden is not None and hidden.hidden is not None
    run = hidden.hidden
    assert (run.source, run.passed, run.total, run.canaries) == ("junit", 3, 3, 2)
    assert run.expected_exit == 1 and run.exit_code == 1
