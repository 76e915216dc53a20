"""Nothing failed is never taken for passed: forgeries from inside the code under test.

Each attack of forgery_attacks.py replaces the function under test on a pytest, a unittest and
a ``node --test`` task and is graded under the default sandbox; none may pass, and those a twin
is there for must end ``tampered`` with a finding that names the twin (or a canary, where one
catches it first). Honest changes, with
hidden tests that use ``pytest.approx``, parameters, platform skips, expected failures, subtests
and node's skip and todo, still pass.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.verdict import Verdict
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.tasks import load_task
from harnessdrive.testing.suites import TaskFiles, write_task
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot
from tests.security.forgery_attacks import ATTACKS

pytestmark = [pytest.mark.security, pytest.mark.slow]

PY_BUGGY = "def add(a, b):\n    return a - b\n"
PY_FIXED = "def add(a, b):\n    return a + b\n"
PYTEST_HIDDEN = """import pytest
from calc import add


def test_more():
    assert add(2, 3) == 5


def test_negative():
    total = add(-2, 1)
    assert total == -1


def test_half():
    assert add(0.5, 0.25) == pytest.approx(0.75)


@pytest.mark.parametrize(("a", "b", "expected"), [(1, 2, 3), (10, 5, 15)])
def test_table(a, b, expected):
    assert add(a, b) == expected
"""
UNITTEST_HIDDEN = """import unittest
from calc import add


class TestSpec(unittest.TestCase):
    def test_more(self):
        self.assertEqual(add(2, 3), 5)

    def test_negative(self):
        self.assertEqual(add(-2, 1), -1)

    def test_pairs(self):
        self.assertEqual([add(1, 1), add(2, 2)], [2, 4])
"""
NODE_BUGGY = "exports.add = (a, b) => a - b;\n"
NODE_FIXED = "exports.add = (a, b) => a + b;\n"
NODE_HIDDEN = """const test = require('node:test');
const assert = require('node:assert');
const { add } = require('../calc.js');

test('adds small numbers', () => {
  assert.strictEqual(add(2, 3), 5);
});

test('adds negative numbers', () => {
  const total = add(-2, 1);
  assert.equal(total, -1);
});

test.describe('lists', () => {
  test('adds pairs', () => {
    assert.deepStrictEqual([add(1, 1), add(2, 2)], [2, 4]);
  });
});
"""
COMMANDS = {
    "pytest": "python -m pytest -q -p no:cacheprovider tests",
    "unittest": "python -m unittest discover -s tests -t .",
    "node": "node --test test/",
}


def task_of(runner: str, hidden: str | None = None) -> TaskFiles:
    if runner == "node":
        return TaskFiles(
            "node-add",
            files={"calc.js": NODE_BUGGY, "package.json": "{}\n"},
            hidden={"test/hidden.test.js": hidden or NODE_HIDDEN},
            solution={"calc.js": NODE_FIXED},
            protected=["test/**"],
            command=COMMANDS[runner],
        )
    files = {"calc.py": PY_BUGGY}
    if runner == "unittest":
        files["tests/__init__.py"] = ""
    default = PYTEST_HIDDEN if runner == "pytest" else UNITTEST_HIDDEN
    return TaskFiles(
        f"{runner}-add",
        files=files,
        hidden={"tests/test_hidden.py": hidden or default},
        solution={"calc.py": PY_FIXED},
        protected=["tests/**"],
        command=COMMANDS[runner],
    )


def graded(tmp_path: Path, task: TaskFiles, files: dict[str, str]) -> Verdict:
    """``task`` graded under the default sandbox after the agent wrote ``files``."""
    return graded_in(write_task(tmp_path / "tasks", task), tmp_path, files)


def graded_in(folder: Path, tmp_path: Path, files: dict[str, str]) -> Verdict:
    """The task in ``folder`` graded under the default sandbox after the agent wrote ``files``."""
    loaded = load_task(folder)
    snap = build_snapshot(loaded.repo_path, None, tmp_path / "snap")
    ws = copy_snapshot(snap, tmp_path / "ws")
    for rel, text in files.items():
        (ws / rel).write_text(text)
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(
        task=loaded,
        snapshot=snap,
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        sandbox=get_sandbox("auto"),
        python=sys.executable,
    )
    return grade(setup, capture_changes(snap, ws))


def _needs(runner: str) -> None:
    if runner == "node" and shutil.which("node") is None:
        pytest.fail("node is needed for the node tasks")


CASES = [
    pytest.param(attack, runner, id=f"{runner}-{attack.name}")
    for attack in ATTACKS
    for runner in attack.sources
]


@pytest.mark.parametrize(("attack", "runner"), CASES)
def test_a_forgery_from_the_code_under_test_never_passes(
    tmp_path: Path, attack: object, runner: str
) -> None:
    from tests.security.forgery_attacks import ForgeryAttack

    assert isinstance(attack, ForgeryAttack)
    _needs(runner)
    module = "calc.js" if runner == "node" else "calc.py"
    task = task_of(runner, attack.hidden.get(runner))
    verdict = graded(tmp_path, task, {module: attack.sources[runner]})
    assert verdict.outcome in ("fail", "tampered"), verdict
    if runner in attack.twin:
        # The twin runs once the deciding run has passed: a forgery that leaves a hidden test
        # failing there is a plain fail already.
        assert verdict.hidden is not None
        if verdict.outcome == "fail" and verdict.hidden.failed + verdict.hidden.errors > 0:
            return
        assert verdict.outcome == "tampered", verdict
        # A canary that comes out wrong settles it in the deciding run; else the twin must.
        assert any(
            "twin" in f.detail or f.detail.startswith("a test that must") for f in verdict.findings
        ), verdict.findings


@pytest.mark.parametrize("runner", ["pytest", "unittest", "node"])
def test_the_honest_fix_passes_with_every_hidden_test_earned(tmp_path: Path, runner: str) -> None:
    _needs(runner)
    fixed = {"node": {"calc.js": NODE_FIXED}, "pytest": {"calc.py": PY_FIXED}}
    verdict = graded(tmp_path, task_of(runner), fixed.get(runner, {"calc.py": PY_FIXED}))
    assert verdict.outcome == "pass", verdict
    assert verdict.hidden is not None
    assert verdict.hidden.twins > 0 and verdict.hidden.canaries == 2
    assert verdict.findings == ()


TRICKY_PYTEST = """import sys

import pytest
from calc import add


def test_close():
    assert add(0.1, 0.2) == pytest.approx(0.3)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_each(n):
    assert add(n, 0) == n


@pytest.mark.skipif(sys.platform != "no-such-platform", reason="only there")
def test_elsewhere():
    assert add(1, 1) == 2


@pytest.mark.xfail(reason="floats", strict=False)
def test_exact_float():
    assert add(0.1, 0.2) == 0.3


def test_optional():
    pytest.importorskip("no_such_module_anywhere")
    assert add(1, 2) == 3


class TestGroup:
    def test_strings(self):
        assert add("a", "b") == "ab"

    def test_lists(self):
        assert add([1], [2]) == [1, 2]
"""
TRICKY_UNITTEST = """import sys
import unittest
from calc import add


class TestTricky(unittest.TestCase):
    def test_sub(self):
        for n in range(3):
            with self.subTest(n=n):
                self.assertEqual(add(n, n), 2 * n)

    @unittest.skipIf(sys.platform != "no-such-platform", "only there")
    def test_elsewhere(self):
        self.assertEqual(add(1, 1), 2)

    @unittest.expectedFailure
    def test_exact_float(self):
        self.assertEqual(add(0.1, 0.2), 0.3)

    def test_almost(self):
        self.assertAlmostEqual(add(0.1, 0.2), 0.3)

    def test_dict(self):
        self.assertDictEqual({"n": add(1, 2)}, {"n": 3})
"""
TRICKY_NODE = """const test = require('node:test');
const assert = require('node:assert/strict');
const { add } = require('../calc.js');

test('adds', () => assert.equal(add(1, 2), 3));
test.skip('is skipped by its author', () => assert.equal(add(1, 2), 4));
test.todo('some day');
test('skips itself', (t) => { t.skip('not here'); });
test('adds strings', async () => {
  await Promise.resolve();
  assert.deepEqual(add('a', 'b'), 'ab');
});
test.describe('nested', () => {
  test.it('adds zero', () => { assert.strictEqual(add(0, 0), 0); });
});
test('has subtests', async (t) => {
  await t.test('adds one', () => assert.strictEqual(add(1, 0), 1));
  await t.test('adds two', () => assert.strictEqual(add(2, 0), 2));
});
test.describe.skip('a group its author skips', () => {
  test('never runs', () => assert.strictEqual(add(1, 1), 3));
});
test.describe('a group with a skip option', { skip: 'later' }, () => {
  test('never runs either', () => assert.strictEqual(add(1, 1), 3));
});
"""


@pytest.mark.parametrize(
    ("runner", "hidden"),
    [("pytest", TRICKY_PYTEST), ("unittest", TRICKY_UNITTEST), ("node", TRICKY_NODE)],
)
def test_tricky_but_honest_hidden_tests_still_pass(
    tmp_path: Path, runner: str, hidden: str
) -> None:
    _needs(runner)
    module = {"calc.js": NODE_FIXED} if runner == "node" else {"calc.py": PY_FIXED}
    verdict = graded(tmp_path, task_of(runner, hidden), module)
    assert verdict.outcome == "pass", verdict
    assert verdict.findings == ()
    assert verdict.hidden is not None and verdict.hidden.twins > 0


def test_a_skip_the_hidden_file_does_not_declare_is_not_a_pass(tmp_path: Path) -> None:
    verdict = graded(tmp_path, task_of("pytest"), {"calc.py": _skip_in("pytest")})
    assert verdict.outcome == "fail"
    assert verdict.hidden is not None and verdict.hidden.note is not None
    assert "test_more (skipped)" in verdict.hidden.note


def _skip_in(runner: str) -> str:
    from tests.security.forgery_attacks import ATTACKS

    return next(a for a in ATTACKS if a.name == "skip-when-called").sources[runner]


# A runner the witness does not know, writing a junit report to {junit}: each test is skipped
# when the code under test raises the runner's own "skip" signal.
OWN_RUNNER = """import sys
from xml.sax.saxutils import quoteattr

import calc

cases = []
for name, args, expected in (("more", (2, 3), 5), ("negative", (-2, 1), -1)):
    try:
        got = calc.add(*args)
    except LookupError:
        cases.append(f"<testcase name={quoteattr(name)}><skipped/></testcase>")
        continue
    failure = "" if got == expected else "<failure/>"
    cases.append(f"<testcase name={quoteattr(name)}>{failure}</testcase>")
with open(sys.argv[1], "w") as out:
    out.write("<testsuite>" + "".join(cases) + "</testsuite>")
"""


@pytest.mark.parametrize(
    ("module", "outcome"),
    [(PY_FIXED, "pass"), ("def add(a, b):\n    raise LookupError('skip')\n", "fail")],
)
def test_any_junit_command_passes_only_when_some_test_passed(
    tmp_path: Path, module: str, outcome: str
) -> None:
    task = TaskFiles(
        "own-runner",
        files={"calc.py": PY_BUGGY, "tools/run.py": OWN_RUNNER},
        solution={"calc.py": PY_FIXED},
        protected=["tools/**"],
        command="PYTHONPATH=. {python} tools/run.py {junit}",
    )
    verdict = graded(tmp_path, task, {"calc.py": module})
    assert verdict.outcome == outcome, verdict
    assert verdict.hidden is not None and verdict.hidden.source == "junit"


# Tests written once in a mixin and run by each TestCase that inherits it, as many unittest
# suites do: they are hidden tests too, and skipping them earns nothing.
_MIXIN_HIDDEN = """import unittest

from calc import add


class AddsMixin:
    def test_small(self):
        self.assertEqual(add(2, 3), 5)

    def test_negative(self):
        self.assertEqual(add(-2, -3), -5)


class AddsTest(unittest.TestCase, AddsMixin):
    pass


class AddsAgainTest(AddsMixin, unittest.TestCase):
    def setUp(self):
        self.extra = 0


class NameTest(unittest.TestCase):
    def test_add_is_callable(self):
        self.assertTrue(callable(add))
"""
_SKIPS_WHEN_CALLED = """import unittest


def add(a, b):
    raise unittest.SkipTest("not applicable here")
"""


@pytest.mark.parametrize("runner", ["pytest", "unittest"])
def test_tests_inherited_from_a_mixin_earn_their_pass(tmp_path: Path, runner: str) -> None:
    task = task_of(runner, _MIXIN_HIDDEN)
    skipped = graded(tmp_path / "skip", task, {"calc.py": _SKIPS_WHEN_CALLED})
    assert skipped.outcome == "fail", skipped
    honest = graded(tmp_path / "honest", task, {"calc.py": PY_FIXED})
    assert honest.outcome == "pass", honest
