"""The grading run starts the environment's runner, counts per test and keeps its witness."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.grading.verdict import Verdict
from harnessdrive.testing.suites import TaskFiles
from tests.conftest import ADD_BUGGY, add_task
from tests.unit.test_grading import fix, run_grader, write

FORGE_JUNIT_AND_EXIT = (
    "import os, re, sys\n"
    "path = re.search(r'--junitxml=(\\S+)', os.environ.get('PYTEST_ADDOPTS', '')).group(1)\n"
    "open(path, 'w').write('<testsuite><testcase classname=\"tests.test_hidden\" "
    'name="test_more"/></testsuite>\')\n'
    "sys.exit(0)\n"
)
EVIL_PLUGIN = (
    "import pytest\n\n@pytest.hookimpl(wrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    report = yield\n    report.outcome = 'passed'\n    return report\n"
)


def test_a_pytest_module_in_the_copy_never_runs_in_place_of_pytest(tmp_path: Path) -> None:
    task = add_task(command="{python} -m pytest -q -p no:cacheprovider")
    verdict = run_grader(tmp_path, task, write("pytest.py", FORGE_JUNIT_AND_EXIT))
    assert verdict.outcome == "tampered"
    assert [f.code for f in verdict.findings] == ["runner-shadow"]
    assert verdict.hidden is not None
    # The real pytest ran: every test failed for real, and the canaries were seen.
    assert (verdict.hidden.failed, verdict.hidden.total, verdict.hidden.canaries) == (3, 3, 2)


def test_plugins_registered_by_metadata_in_the_copy_are_not_loaded(tmp_path: Path) -> None:
    def plant(ws: Path) -> None:
        write("evil_plugin.py", EVIL_PLUGIN)(ws)
        write("evil-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: evil\nVersion: 1\n")(ws)
        write("evil-1.0.dist-info/entry_points.txt", "[pytest11]\nevil = evil_plugin\n")(ws)

    task = add_task(command="{python} -m pytest -q -p no:cacheprovider")
    verdict = run_grader(tmp_path, task, plant)
    assert {f.code for f in verdict.findings} == {"package-metadata"}
    assert verdict.hidden is not None and verdict.hidden.failed == 3


def test_the_environments_own_plugins_still_load(tmp_path: Path) -> None:
    hidden = (
        "import pytest\nfrom calc import add\n\n\n@pytest.mark.timeout(60)\n"
        "def test_more():\n    assert add(2, 3) == 5\n"
    )
    verdict = fixed_with_hidden(tmp_path, hidden, "--strict-markers")
    assert verdict.outcome == "pass", verdict
    assert verdict.hidden is not None
    assert (verdict.hidden.passed, verdict.hidden.canaries, verdict.hidden.exit_code) == (2, 2, 1)


UNITTEST_VISIBLE = (
    "import unittest\nfrom calc import add\n\n\nclass TestSmall(unittest.TestCase):\n"
    "    def test_small(self):\n        self.assertEqual(add(1, 1), 2)\n"
)
UNITTEST_HIDDEN = (
    "import unittest\nfrom calc import add\n\n\nclass TestSpec(unittest.TestCase):\n"
    "    def test_more(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
    "    def test_negative(self):\n        self.assertEqual(add(-2, 1), -1)\n"
)


def test_pytest_runs_with_its_own_startup_frozen_and_the_tests_garbage_collected(
    tmp_path: Path,
) -> None:
    hidden = (
        "import gc, weakref\nfrom calc import add\n\n\nclass Node:\n    pass\n\n\n"
        "def test_more():\n    assert gc.get_freeze_count() > 1000\n"
        "    node = Node()\n    node.me = node\n    gone = weakref.ref(node)\n"
        "    del node\n    gc.collect()\n    assert gone() is None\n    assert add(2, 3) == 5\n"
    )
    verdict = fixed_with_hidden(tmp_path, hidden)
    assert verdict.outcome == "pass", verdict
    assert verdict.hidden is not None and verdict.hidden.passed == 2


def fixed_with_hidden(tmp_path: Path, hidden: str, *options: str) -> Verdict:
    """The fix graded by ``python -m pytest`` with ``hidden`` as the hidden test file."""
    task = add_task(
        command=" ".join(["{python} -m pytest -q", *options, "-p no:cacheprovider"]),
        hidden={"tests/test_hidden.py": hidden},
    )
    return run_grader(tmp_path, task, fix)


def unittest_task(hidden: str = UNITTEST_HIDDEN) -> TaskFiles:
    return add_task(
        files={"calc.py": ADD_BUGGY, "tests/test_visible.py": UNITTEST_VISIBLE},
        hidden={"tests/test_hidden.py": hidden},
        command="{python} -m unittest discover -s tests",
    )


def test_unittest_runs_with_its_own_startup_frozen_and_the_tests_garbage_collected(
    tmp_path: Path,
) -> None:
    hidden = UNITTEST_HIDDEN + (
        "\n    def test_collected(self):\n        import gc, weakref\n\n"
        "        self.assertGreater(gc.get_freeze_count(), 1000)\n"
        "        node = TestSpec()\n        node.me = node\n        gone = weakref.ref(node)\n"
        "        del node\n        gc.collect()\n        self.assertIsNone(gone())\n"
    )
    verdict = run_grader(tmp_path, unittest_task(hidden), fix)
    assert verdict.outcome == "pass", verdict
    assert verdict.hidden is not None and verdict.hidden.passed == 4


def test_unittest_is_counted_per_test_without_a_reporter_from_the_task(tmp_path: Path) -> None:
    verdict = run_grader(tmp_path, unittest_task(), fix)
    assert verdict.outcome == "pass", verdict
    assert verdict.hidden is not None
    run = verdict.hidden
    assert (run.source, run.passed, run.total, run.canaries, run.expected_exit) == (
        "junit",
        3,
        3,
        2,
        1,
    )


def test_unittest_forced_to_exit_zero_is_tampered(tmp_path: Path) -> None:
    forced = "import atexit, os\natexit.register(lambda: os._exit(0))\n\n" + ADD_BUGGY
    verdict = run_grader(tmp_path, unittest_task(), write("calc.py", forced))
    assert verdict.outcome == "tampered"
    assert [f.code for f in verdict.findings] == ["witness-mismatch"]


NODE_CALC = "exports.add = (a, b) => a + b;\n"
NODE_HIDDEN = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "const { add } = require('../calc.js');\n\n"
    "test('adds small numbers', () => assert.strictEqual(add(2, 3), 5));\n"
)


def node_task() -> TaskFiles:
    return TaskFiles(
        "node-add",
        files={"calc.js": "exports.add = (a, b) => a - b;\n", "package.json": "{}\n"},
        hidden={"test/hidden.test.js": NODE_HIDDEN},
        protected=["test/**"],
        command="node --test test/",
    )


def test_node_is_counted_per_test_and_an_honest_fix_passes(tmp_path: Path) -> None:
    verdict = run_grader(tmp_path, node_task(), write("calc.js", NODE_CALC))
    assert verdict.outcome == "pass", verdict
    assert verdict.hidden is not None
    assert (verdict.hidden.source, verdict.hidden.passed, verdict.hidden.canaries) == (
        "junit",
        1,
        2,
    )


def test_node_code_that_neuters_assertions_is_tampered(tmp_path: Path) -> None:
    forger = (
        "const assert = require('node:assert');\n"
        "for (const name of ['strictEqual', 'deepEqual', 'equal']) {\n"
        "  assert[name] = () => {}; assert.strict[name] = () => {};\n}\n"
        "exports.add = (a, b) => a - b;\n"
    )
    verdict = run_grader(tmp_path, node_task(), write("calc.js", forger))
    assert verdict.outcome == "tampered"
    assert {f.code for f in verdict.findings} == {"witness-mismatch"}


def test_a_runner_module_on_the_commands_pythonpath_never_runs_either(tmp_path: Path) -> None:
    task = add_task(command="PYTHONPATH=src {python} -m pytest -q -p no:cacheprovider")
    verdict = run_grader(tmp_path, task, write("src/pytest.py", FORGE_JUNIT_AND_EXIT))
    assert [f.code for f in verdict.findings] == ["runner-shadow"]
    assert verdict.hidden is not None
    assert (verdict.hidden.failed, verdict.hidden.total) == (3, 3)
