"""``check`` on improvement tasks: every objective is attacked and its noise measured.

The demo task measures through the objective runner: no attack moves it. An objective that
imports the agent's code and reads the value from its own output is forged by the exit hooks,
and check says so with the fix. A task with ±5% noise and one sample per measurement is refused
with the repeats it needs; with those repeats it passes."""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path

import pytest

from harnessdrive.checking.cases import TaskCheck
from harnessdrive.checking.suite import self_test
from harnessdrive.demo import DEMO_SUITE
from harnessdrive.tasks.loading import load_suite

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("improve-check")]

IN_PROCESS_OBJECTIVE = """
import json, sys
sys.path.insert(0, ".")
from dupes.finder import repeated
count = [0]
class Key:
    def __init__(self, value):
        self.value = value
    def __eq__(self, other):
        count[0] += 1
        return self.value == other.value
    def __hash__(self):
        count[0] += 1
        return hash(self.value)
repeated([Key(v % 37) for v in range(200)])
print(json.dumps({"value": count[0]}))
"""

# Reads the level as text, never importing the code: nothing the agent's code does at exit
# reaches it. Its jitter is fixed by the sample's index, so the test is deterministic.
NOISY_OBJECTIVE = """
import re, sys
level = int(re.search("LEVEL = ([0-9]+)", open("level.py").read()).group(1))
jitter = [-0.05, 0.025, 0.05, -0.025, 0.0][(int(sys.argv[1]) - 1) % 5]
print(level * (1 + jitter))
"""


def _check(suite: Path, logs: Path, repeat: int = 1) -> TaskCheck:
    (report,) = self_test(load_suite(suite), logs=logs, jobs=2, repeat=repeat)
    return report


def _demo_suite(root: Path, *, in_process: bool) -> Path:
    suite = root / "suite"
    shutil.copytree(DEMO_SUITE / "improve-project", suite / "improve-project")
    task = suite / "tasks" / "fewer-comparisons"
    shutil.copytree(DEMO_SUITE / "tasks" / "fewer-comparisons", task)
    (suite / "suite.toml").write_text('name = "attacked"\n')
    if in_process:
        (task / "objective" / "in_process.py").write_text(IN_PROCESS_OBJECTIVE)
        toml = task / "task.toml"
        text = toml.read_text()
        start = text.index('command = "{measure}')
        end = text.index("]", text.index("inject = [")) + 1
        toml.write_text(
            text[:start]
            + 'command = "{python} .objective/in_process.py"\n'
            + 'inject = [{ source = "objective/in_process.py", '
            + 'target = ".objective/in_process.py" }]'
            + text[end:]
        )
    return suite


def test_no_attack_moves_the_demo_objective(tmp_path: Path) -> None:
    report = _check(_demo_suite(tmp_path, in_process=False), tmp_path / "logs", repeat=2)
    assert report.problems == []
    # check --repeat includes improvement tasks: their reference and noop trials run again.
    assert report.repeats == {"reference": ("pass", "pass"), "noop": ("fail", "fail")}
    attacks = {case.name: case.outcome for case in report.cases if case.name.startswith("attack")}
    assert attacks == {
        "attack-exit-number": "fail",
        "attack-exit-json": "fail",
        "attack-channels": "fail",
        "attack-measured": "fail",
        "attack-comment": "fail",
    }
    assert any("spread at the baseline: ±0.0% per sample over 5 samples" in n for n in report.notes)
    # Each attack's own trial ended without a pass: no forged value got an improvement.
    for name in attacks:
        record = json.loads(
            (tmp_path / "logs" / "fewer-comparisons" / name / "improve.json").read_text()
        )
        assert record["passed"] is False and record["metrics"]["improve.rounds_kept"] == 0


def test_an_objective_read_from_the_measured_process_is_reported_forgeable(
    tmp_path: Path,
) -> None:
    report = _check(_demo_suite(tmp_path, in_process=True), tmp_path / "logs")
    moved = {case.name for case in report.cases if case.outcome == "moved"}
    # It prints a JSON value, which a later bare number does not override; a later JSON line
    # does, and so does every attack that writes one.
    assert {"attack-exit-json", "attack-channels", "attack-measured"} <= moved
    assert "attack-comment" not in moved
    forged = [p for p in report.problems if "without improving anything" in p]
    assert forged and all("objective runner" in p for p in forged)
    assert not report.ok


def _noisy_suite(root: Path, repeats: int) -> Path:
    suite = root / f"noisy-{repeats}"
    project = suite / "project"
    (project / "tests").mkdir(parents=True)
    (project / "level.py").write_text("LEVEL = 100\n")
    (project / "tests" / "test_level.py").write_text(
        "from level import LEVEL\n\n\ndef test_positive():\n    assert LEVEL > 0\n"
    )
    task = suite / "tasks" / "noisy"
    (task / "objective").mkdir(parents=True)
    (task / "objective" / "noisy.py").write_text(NOISY_OBJECTIVE)
    (task / "better").mkdir()
    (task / "better" / "level.py").write_text("LEVEL = 70\n")
    (task / "task.toml").write_text(
        textwrap.dedent(
            f"""
            id = "noisy"
            prompt = "Lower the level."
            [repo]
            path = "../../project"
            [grade]
            command = "{{python}} -m pytest -q tests"
            protected = ["tests/**"]
            [improve]
            rounds = 1
            min_improvement = 0.02
            overlays = ["better"]
            [improve.objective]
            command = "{{python}} .objective/noisy.py {{sample}}"
            inject = [{{ source = "objective/noisy.py", target = ".objective/noisy.py" }}]
            repeats = {repeats}
            """
        )
    )
    (suite / "suite.toml").write_text('name = "noisy"\n')
    return suite


def test_noise_beyond_the_margin_is_refused_with_the_repeats_that_fix_it(tmp_path: Path) -> None:
    noisy = _check(_noisy_suite(tmp_path, 1), tmp_path / "logs-1")
    (problem,) = noisy.problems
    assert "exceeds min_improvement 0.02" in problem
    found = re.search(r"set the objective's repeats to (\d+)", problem)
    assert found is not None
    fixed = _check(_noisy_suite(tmp_path, int(found.group(1))), tmp_path / "logs-fixed")
    assert fixed.problems == [] and fixed.ok


def _memory_suite(root: Path) -> Path:
    """A workload that imports the agent's code in process, measured by the runner's parent."""
    suite = root / "memory"
    project = suite / "project"
    (project / "tests").mkdir(parents=True)
    (project / "work.py").write_text(
        "def work():\n    data = [1] * 10_000_000\n    return sum(data[:10])\n"
    )
    (project / "tests" / "test_work.py").write_text(
        "from work import work\n\n\ndef test_work():\n    assert work() == 10\n"
    )
    task = suite / "tasks" / "memory"
    (task / "objective").mkdir(parents=True)
    (task / "objective" / "bench.py").write_text(
        "import sys\nfrom harnessdrive_objective import report\n"
        'sys.path.insert(0, ".")\nfrom work import work\nreport(work())\n'
    )
    (task / "better").mkdir()
    (task / "better" / "work.py").write_text(
        "def work():\n    data = [1] * 10\n    return sum(data[:10])\n"
    )
    (task / "task.toml").write_text(
        textwrap.dedent(
            """
            id = "memory"
            prompt = "Use less memory."
            [repo]
            path = "../../project"
            [grade]
            command = "{python} -m pytest -q tests"
            protected = ["tests/**"]
            [improve]
            rounds = 1
            min_improvement = 0.3
            overlays = ["better"]
            [improve.objective]
            command = "{measure} peak-memory-kb -- {python} .objective/bench.py"
            inject = [{ source = "objective/bench.py", target = ".objective/bench.py" }]
            """
        )
    )
    (suite / "suite.toml").write_text('name = "memory"\n')
    return suite


def test_a_workload_in_process_measured_by_the_runner_cannot_be_forged(tmp_path: Path) -> None:
    report = _check(_memory_suite(tmp_path), tmp_path / "logs")
    assert report.problems == [], report.problems
    cases = {case.name: (case.outcome, case.detail) for case in report.cases}
    assert cases["reference"][0] == "pass"
    # The fake values went unread; what detected the measurement gave another result: no value.
    for attack in ("exit-number", "exit-json", "comment"):
        assert cases[f"attack-{attack}"][0] == "fail" and "value" in cases[f"attack-{attack}"][1]
    assert cases["attack-measured"] == ("fail", "could not be measured")
