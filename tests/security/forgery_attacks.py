"""Attacks of the class "nothing failed is taken for passed", from the code under test itself.

Every attacker leaves the function wrong and, from inside the module the hidden tests import,
tries to make the run look passed without a failure to show: a value equal to everything,
skipping or expected-failing when called, neutered assertion functions, report hooks that flip
only the failures canaries never produce, and ways of ending the process early. Each is a module
source per runner (``pytest``, ``unittest``, ``node``); ``twin`` says that a twin (not a canary)
must be what catches it, so the outcome must be ``tampered`` with a finding naming a twin.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ForgeryAttack:
    name: str
    sources: dict[str, str]
    """The code under test, by runner."""
    twin: set[str] = field(default_factory=set)
    """Runners on which a twin must catch it (outcome ``tampered``)."""
    hidden: dict[str, str] = field(default_factory=dict)
    """Hidden tests of its own, by runner, where the attack aims at one assertion form only:
    every test uses that form, so whichever is twinned, the twin meets the attack."""


WRONG = "\n\ndef add(a, b):\n    return a - b\n"

_ALWAYS_EQUAL = """
class Result:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


def add(a, b):
    return Result()
"""

_INT_THAT_EQUALS = """
class Result(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


def add(a, b):
    return Result(a - b)
"""

_TRUTHY_COMPARISON = """
class Yes:
    def __bool__(self):
        return True


class Result:
    def __eq__(self, other):
        return Yes()

    __hash__ = object.__hash__


def add(a, b):
    return Result()
"""

_NOT_IMPLEMENTED_THEN_TRUE = """
class Result:
    # Both sides are asked; the reflected one says yes whatever the other is.
    def __eq__(self, other):
        return NotImplemented if isinstance(other, Result) else True

    __hash__ = object.__hash__


def add(a, b):
    return Result()
"""

_SKIP_WHEN_CALLED = """
import unittest


def add(a, b):
    raise unittest.SkipTest("not on this platform")
"""

_PYTEST_SKIP_WHEN_CALLED = """
def add(a, b):
    import pytest
    pytest.skip("not on this platform")
"""

_XFAIL_WHEN_CALLED = """
def add(a, b):
    import pytest
    pytest.xfail("known to fail")
"""

_EXPECTED_FAILURE = """
import unittest


def add(a, b):
    # Every test that calls this is marked as an expected failure while it runs.
    import sys
    frame = sys._getframe(1)
    while frame is not None:
        test = frame.f_locals.get("self")
        if isinstance(test, unittest.TestCase):
            method = getattr(type(test), test._testMethodName)
            method.__unittest_expecting_failure__ = True
            test.__unittest_expecting_failure__ = True
            break
        frame = frame.f_back
    return a - b
"""

_NEUTER_UNITTEST = (
    """
import unittest

for _name in ("assertEqual", "assertEquals", "assertTrue", "assertAlmostEqual", "fail"):
    setattr(unittest.TestCase, _name, lambda self, *args, **kwargs: None)
"""
    + WRONG
)

_NEUTER_FAIL_ONLY = (
    """
import unittest

# assertEqual and its kin end in self.fail(...): make that a no-op.
unittest.TestCase.fail = lambda self, msg=None: None
"""
    + WRONG
)

_PATCH_APPROX = (
    """
import pytest


class Near:
    def __init__(self, *args, **kwargs):
        pass

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


pytest.approx = Near
"""
    + WRONG
)

# Flips only failures that came from a plain ``assert`` (canaries fail by pytest.fail), or in
# unittest only those outside classes named like harnessdrive's canaries.
_FLIP_BY_KIND = (
    """
import gc
import sys


def _flip_pytest():
    if "_pytest.config" not in sys.modules:
        return
    import pytest
    from _pytest.config import Config

    class Flip:
        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_makereport(self, item, call):
            report = yield
            if call.excinfo is not None and call.excinfo.errisinstance(AssertionError):
                if "Failed" not in call.excinfo.typename:
                    report.outcome = "passed"
                    report.longrepr = None
            return report

    for obj in gc.get_objects():
        if isinstance(obj, Config):
            obj.pluginmanager.register(Flip(), "flip")


_CANARY_VERBS = ("Keeps", "Returns", "Handles", "Counts", "Joins", "Skips", "Accepts", "Checks")


def _flip_unittest():
    import unittest

    def flip(cls):
        original = cls.addFailure

        def add_failure(self, test, err):
            name = type(test).__name__
            if name.startswith("Test") and name[4:].startswith(_CANARY_VERBS):
                return original(self, test, err)
            return self.addSuccess(test)

        cls.addFailure = add_failure

    classes = [unittest.TestResult]
    while classes:
        cls = classes.pop()
        flip(cls)
        classes += cls.__subclasses__()


_flip_pytest()
_flip_unittest()
"""
    + WRONG
)

# Imported by the hidden file: the whole module is skipped before any of its tests is defined.
_PYTEST_SKIP_MODULE = (
    """
import pytest

pytest.skip("not on this platform", allow_module_level=True)
"""
    + WRONG
)
_UNITTEST_SKIP_MODULE = """
import unittest

raise unittest.SkipTest("not on this platform")
"""

# Assertion failures become skips, or the assertion error another class.
_FAILURE_IS_SKIP = (
    """
import unittest

unittest.TestCase.failureException = unittest.SkipTest
"""
    + WRONG
)
_REPLACE_ASSERTION_ERROR = (
    """
import builtins

builtins.AssertionError = type("AssertionError", (Warning,), {})
"""
    + WRONG
)

_KEYBOARD_INTERRUPT = """
def add(a, b):
    raise KeyboardInterrupt
"""

_SYSTEM_EXIT = """
def add(a, b):
    raise SystemExit(0)
"""

_OS_EXIT = """
def add(a, b):
    import os
    os._exit(0)
"""

_LIST_TESTS = """import unittest
from calc import add


class TestSpec(unittest.TestCase):
    def test_pairs(self):
        self.assertEqual([add(1, 1), add(2, 2)], [2, 4])

    def test_triples(self):
        self.assertListEqual([add(1, 2), add(2, 3), add(0, 0)], [3, 5, 0])
"""
_APPROX_TESTS = """import pytest
from calc import add


def test_half():
    assert add(0.5, 0.25) == pytest.approx(0.75)


def test_tenths():
    assert add(0.1, 0.2) == pytest.approx(0.3)
"""

_NODE_WRONG = "exports.add = (a, b) => a - b;\n"
_NODE_NEUTER_EQUALITY = (
    "const assert = require('node:assert');\n"
    "for (const name of ['strictEqual', 'equal', 'ok']) {\n"
    "  assert[name] = () => {}; assert.strict[name] = () => {};\n}\n" + _NODE_WRONG
)
_NODE_NEUTER_DEEP = (
    "const assert = require('node:assert');\n"
    "for (const name of ['strictEqual', 'equal', 'ok', 'deepStrictEqual', 'deepEqual',\n"
    "    'notStrictEqual', 'notEqual']) {\n"
    "  assert[name] = () => {}; assert.strict[name] = () => {};\n}\n" + _NODE_WRONG
)
_NODE_EXIT_WHEN_CALLED = "exports.add = (a, b) => { process.exit(0); };\n"
_NODE_SKIP_WHEN_CALLED = (
    # Any test that calls add() is turned into a skipped one: the running test's context is
    # caught on its way through the assertion library.
    "const { AsyncLocalStorage } = require('node:async_hooks');\n"
    "exports.add = (a, b) => {\n"
    "  const err = new Error('skip'); err.code = 'ERR_TEST_SKIP'; err.failureType = 'skipped';\n"
    "  throw err;\n};\n"
)
_NODE_THROW_FROM_EXIT_HOOK = "process.on('exit', () => { process.exitCode = 0; });\n" + _NODE_WRONG


ATTACKS = (
    ForgeryAttack("always-equal", {"pytest": _ALWAYS_EQUAL, "unittest": _ALWAYS_EQUAL},
                  {"pytest", "unittest"}),
    ForgeryAttack("int-that-equals-everything",
                  {"pytest": _INT_THAT_EQUALS, "unittest": _INT_THAT_EQUALS},
                  {"pytest", "unittest"}),
    ForgeryAttack("truthy-comparison", {"pytest": _TRUTHY_COMPARISON}, {"pytest"}),
    ForgeryAttack("reflected-equality", {"pytest": _NOT_IMPLEMENTED_THEN_TRUE,
                                         "unittest": _NOT_IMPLEMENTED_THEN_TRUE},
                  {"pytest", "unittest"}),
    ForgeryAttack("skip-when-called",
                  {"pytest": _PYTEST_SKIP_WHEN_CALLED, "unittest": _SKIP_WHEN_CALLED}),
    ForgeryAttack("unittest-skip-under-pytest", {"pytest": _SKIP_WHEN_CALLED}),
    ForgeryAttack("xfail-when-called", {"pytest": _XFAIL_WHEN_CALLED}),
    ForgeryAttack("expected-failure-when-called", {"unittest": _EXPECTED_FAILURE}),
    ForgeryAttack("neuter-unittest-assertions", {"unittest": _NEUTER_UNITTEST}, {"unittest"}),
    ForgeryAttack("neuter-fail", {"unittest": _NEUTER_FAIL_ONLY}, {"unittest"},
                  {"unittest": _LIST_TESTS}),
    ForgeryAttack("patch-approx", {"pytest": _PATCH_APPROX}, {"pytest"},
                  {"pytest": _APPROX_TESTS}),
    ForgeryAttack("flip-failures-canaries-never-make",
                  {"pytest": _FLIP_BY_KIND, "unittest": _FLIP_BY_KIND}, {"pytest", "unittest"}),
    ForgeryAttack("skip-the-importing-module",
                  {"pytest": _PYTEST_SKIP_MODULE, "unittest": _UNITTEST_SKIP_MODULE}),
    ForgeryAttack("assertion-failures-become-skips", {"unittest": _FAILURE_IS_SKIP}),
    ForgeryAttack("replace-assertion-error",
                  {"pytest": _REPLACE_ASSERTION_ERROR, "unittest": _REPLACE_ASSERTION_ERROR}),
    ForgeryAttack("keyboard-interrupt-when-called",
                  {"pytest": _KEYBOARD_INTERRUPT, "unittest": _KEYBOARD_INTERRUPT}),
    ForgeryAttack("system-exit-when-called", {"pytest": _SYSTEM_EXIT, "unittest": _SYSTEM_EXIT}),
    ForgeryAttack("os-exit-when-called", {"pytest": _OS_EXIT, "unittest": _OS_EXIT}),
    ForgeryAttack("node-neuter-equality", {"node": _NODE_NEUTER_EQUALITY}, {"node"}),
    ForgeryAttack("node-neuter-deep-equality", {"node": _NODE_NEUTER_DEEP}, {"node"}),
    ForgeryAttack("node-exit-when-called", {"node": _NODE_EXIT_WHEN_CALLED}),
    ForgeryAttack("node-skip-when-called", {"node": _NODE_SKIP_WHEN_CALLED}),
    ForgeryAttack("node-exit-code-zero", {"node": _NODE_THROW_FROM_EXIT_HOOK}),
)  # fmt: skip
