"""A pass is earned test by test: every hidden test must be reported *passed*.

A run without a failure is not yet a pass. Code under test can make the real tests skip (it
raises the runner's skip exception when called), mark them as expected failures, or keep them
from being collected, and the run then has nothing failed and nothing passed. So each test of
the hidden files is looked up in the report, one by one:

- reported passed (every parametrized case or subtest of it): earned;
- reported failed or errored: the run fails already;
- reported skipped (a skip, an expected failure, a ``todo``): not passed, unless the hidden file
  itself declares that the test may skip (a ``skip``/``skipif``/``xfail`` mark or decorator, a
  ``pytestmark``, a skip call in the test, in its class's set-up or at module level, a node
  ``test.skip``/``{ skip }``/``t.skip()``/``todo``): the task's author then said so, and the
  test stays neutral;
- missing from the report (deselected, uncollected, a crashed run): not passed.

When the task folder holds a fresh record of the reference's outcomes
(grading/reference_outcomes.py, written by ``check`` and by mining), it decides instead of the
declarations: a hidden test the reference passed must be reported passed; one the reference
skipped or did not run stays neutral, whatever made it skip. Without a record, what the hidden
file declares stands in for it: a test that a fixture defined elsewhere skips is then not
passed, and the task's check records the reference's outcomes so that it no longer is.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from harnessdrive.grading.junit import JunitCase, JunitCounts
from harnessdrive.grading.runners import RunnerKind

# The names a test file uses to declare a skip or an expected failure, in any runner.
_SKIP_WORDS = re.compile(
    r"\b(skip|skipif|skipIf|skipUnless|skipTest|SkipTest|Skipped|xfail|expectedFailure"
    r"|importorskip|todo)\b"
)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class HiddenTest:
    target: str
    """The hidden file that defines it."""
    name: str
    """The test function or method (Python), or the test's title (node)."""
    may_skip: bool
    """The hidden file declares that it may skip (or be an expected failure)."""
    may_be_absent: bool = False
    """The file skips a whole group around it, which the report then lists as one case."""


@dataclass(frozen=True)
class Unearned:
    test: HiddenTest
    why: str
    """``skipped`` or ``missing``."""


def python_hidden(target: str, tree: ast.Module, collected: Sequence[str]) -> list[HiddenTest]:
    """The collected tests of a parsed hidden file, each with whether the file lets it skip."""
    wanted = set(collected)
    module_skips = any(
        _declares_skip(node) for node in tree.body if not _is_test_holder(node, wanted)
    )
    found: list[HiddenTest] = []
    for node in tree.body:
        if isinstance(node, _FUNCTIONS) and node.name in wanted:
            found.append(HiddenTest(target, node.name, module_skips or _declares_skip(node)))
        elif isinstance(node, ast.ClassDef):
            tests = [i for i in node.body if isinstance(i, _FUNCTIONS) and i.name in wanted]
            if not tests:
                continue
            others = [i for i in node.body if not any(i is t for t in tests)]
            class_skips = (
                module_skips
                or any(_declares_skip(d) for d in node.decorator_list)
                or any(_declares_skip(i) for i in others)
                or any(_declares_skip(b) for b in node.bases)
            )
            found += [HiddenTest(target, t.name, class_skips or _declares_skip(t)) for t in tests]
    return found


def _is_test_holder(node: ast.stmt, wanted: set[str]) -> bool:
    if isinstance(node, _FUNCTIONS):
        return node.name in wanted
    return isinstance(node, ast.ClassDef) and any(
        isinstance(i, _FUNCTIONS) and i.name in wanted for i in node.body
    )


def _declares_skip(node: ast.AST) -> bool:
    return _SKIP_WORDS.search(ast.unparse(node)) is not None


def node_hidden(target: str, titles: Iterable[tuple[str, str, str]]) -> list[HiddenTest]:
    """Hidden node tests from (title, the text of the test's call, the headers of the groups
    around it) triples."""
    return [
        HiddenTest(
            target,
            title,
            _SKIP_WORDS.search(text + groups) is not None,
            _SKIP_WORDS.search(groups) is not None,
        )
        for title, text, groups in titles
    ]


def unearned(
    runner: RunnerKind,
    hidden: Sequence[HiddenTest],
    real: Sequence[JunitCase],
    *,
    selects: bool,
    skipped_whole: Iterable[str] = (),
    reference: Mapping[str, str] | None = None,
) -> list[Unearned]:
    """The hidden tests that did not earn their pass (failures are counted elsewhere).

    ``reference``: the reference's recorded outcome of each test (``target::name``)."""
    whole = set(skipped_whole)
    by_name: dict[str, list[JunitCase]] = {}
    for case in real:  # looked up by name: a large suite has thousands of cases
        key = case.name if runner == "node" else base_name(case.name)
        by_name.setdefault(key, []).append(case)
    found: list[Unearned] = []
    for test in hidden:
        if test.target in whole:
            continue  # counted once, as the file
        cases = [c for c in by_name.get(test.name, ()) if _is_case_of(runner, c, test)]
        if reference is not None:
            if reference.get(f"{test.target}::{test.name}") != "passed":
                continue  # the reference did not pass it either: neutral
            if not cases:
                found.append(Unearned(test, "missing"))
            elif any(c.outcome == "skipped" for c in cases):
                found.append(Unearned(test, "skipped"))
            continue
        if not cases:
            if not (selects or test.may_be_absent):
                found.append(Unearned(test, "missing"))
        elif any(c.outcome == "skipped" for c in cases) and not test.may_skip:
            found.append(Unearned(test, "skipped"))
    return found


def counted_as_not_passed(
    runner: RunnerKind,
    counts: JunitCounts,
    found: Sequence[Unearned],
    real: Sequence[JunitCase],
) -> JunitCounts:
    """``counts`` with every hidden test of ``found`` counted as not passed: its skipped cases
    become errors, a missing test is one more error."""
    missing = sum(1 for u in found if u.why == "missing")
    was_skipped = [u.test for u in found if u.why == "skipped"]
    skipped = sum(
        1
        for r in real
        if r.outcome == "skipped" and any(_is_case_of(runner, r, t) for t in was_skipped)
    )
    return replace(
        counts,
        total=counts.total + missing,
        errors=counts.errors + missing + skipped,
        skipped=counts.skipped - skipped,
    )


def is_case_of(runner: RunnerKind, case: JunitCase, test: HiddenTest) -> bool:
    return _is_case_of(runner, case, test)


def _is_case_of(runner: RunnerKind, case: JunitCase, test: HiddenTest) -> bool:
    if runner == "node":
        return case.name == test.name
    stem = test.target.rpartition("/")[2].rpartition(".")[0]
    return base_name(case.name) == test.name and stem in case.classname


def base_name(name: str) -> str:
    """A case's test name without its parameters (``test_x[1-2]``) or subtest (``test_x (i=1)``)."""
    return name.split("[", 1)[0].split(" ", 1)[0]


def describe(found: Sequence[Unearned]) -> str:
    shown = ", ".join(f"{u.test.name} ({u.why})" for u in found[:10])
    more = f" and {len(found) - 10} more" if len(found) > 10 else ""
    return f"hidden tests that did not pass: {shown}{more}"
