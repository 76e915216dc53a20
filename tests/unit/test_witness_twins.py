"""Twins of hidden tests and the per-test earned pass: how a twin file is made, and what an
honest run of it reports."""

from __future__ import annotations

import ast
import difflib
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.grading.earned import HiddenTest, unearned
from harnessdrive.grading.junit import JunitCase, read_cases
from harnessdrive.grading.node_twins import node_tests, perturbed_node_file, skeleton
from harnessdrive.grading.twins import Twin, perturbed_file, twin_problem
from harnessdrive.grading.witness import judge, plant, twin_file

SHAPES = b"""import pytest
from calc import add, pair, name, table


def test_int():
    assert add(2, 3) == 5


def test_reversed():
    assert 5 == add(2, 3)


def test_negative():
    value = add(-2, 1)
    assert value == -1, "negative"


def test_float():
    assert add(0.5, 0.25) == 0.75


def test_approx():
    assert add(0.1, 0.2) == pytest.approx(0.3)


def test_list():
    assert pair(1) == [1, 1]


def test_tuple():
    assert tuple(pair(2)) == (2, 2)


def test_string():
    assert name("x") == "name-x"


def test_dict():
    assert table() == {"a": 1}


def test_none_and_bool():
    assert (add(1, 1) == 2) == True


@pytest.mark.parametrize(("a", "expected"), [(1, 2), (5, 6)])
def test_param(a, expected):
    assert add(a, 1) == expected


def test_variable():
    expected = {"a": 1}
    assert table() == expected


class TestInClass:
    def test_method(self):
        assert add(4, 4) == 8
"""
CALC = (
    "def add(a, b):\n    return a + b\n\n\ndef pair(x):\n    return [x, x]\n\n\n"
    "def name(x):\n    return 'name-' + x\n\n\ndef table():\n    return {'a': 1}\n"
)


def _hidden(
    data: bytes, target: str = "tests/test_hidden.py", runner: str = "pytest"
) -> list[HiddenTest]:
    plan, _ = plant(runner, [(target, data)], random.Random(0))  # type: ignore[arg-type]
    return list(plan.expected)


def _twins(data: bytes, tries: int = 120) -> dict[str, tuple[bytes, Twin]]:
    """Every twin that the draw makes of ``data``, by the test it perturbs."""
    hidden = _hidden(data)
    tree = ast.parse(data)
    found: dict[str, tuple[bytes, Twin]] = {}
    for seed in range(tries):
        made = perturbed_file("tests/test_hidden.py", data, tree, hidden, random.Random(seed))
        if made is not None:
            found.setdefault(made[1].name, made)
    return found


def _changed_lines(before: bytes, after: bytes) -> list[str]:
    diff = difflib.unified_diff(
        before.decode().splitlines(), after.decode().splitlines(), lineterm="", n=0
    )
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _run_pytest(folder: Path) -> dict[str, str]:
    junit = folder / "junit.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests",
         f"--junitxml={junit}"],
        cwd=folder, env={"PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True, check=False,
    )  # fmt: skip
    outcomes: dict[str, str] = {}
    for case in read_cases(junit):
        name = case.name.split("[")[0]
        if outcomes.get(name, "passed") == "passed":
            outcomes[name] = case.outcome
    return outcomes


def test_every_literal_expectation_shape_gets_a_twin_that_changes_that_value_alone(
    tmp_path: Path,
) -> None:
    twins = _twins(SHAPES)
    tests = {n.name for n in ast.walk(ast.parse(SHAPES)) if isinstance(n, ast.FunctionDef)}
    # An expectation computed at run time (a variable) is never wrapped in a helper; a
    # parameter's value is changed in one row of its table.
    assert set(twins) == tests - {"test_variable"}
    assert (twins["test_param"][1].case, twins["test_param"][1].cases) in ((0, 2), (1, 2))
    (tmp_path / "calc.py").write_text(CALC)
    (tmp_path / "tests").mkdir()
    original = ast.parse(SHAPES)
    for name, (content, twin) in sorted(twins.items()):
        assert twin.container == ("TestInClass" if name == "test_method" else "")
        changed = _changed_lines(SHAPES, content)
        assert len(changed) == 2, changed  # one line out, one line in, at the same place
        assert content.count(b"\n") == SHAPES.count(b"\n")
        layout = [(type(n).__name__, getattr(n, "name", ""), n.lineno, n.end_lineno)
                  for n in ast.walk(ast.parse(content)) if isinstance(n, ast.stmt)]  # fmt: skip
        assert layout == [(type(n).__name__, getattr(n, "name", ""), n.lineno, n.end_lineno)
                          for n in ast.walk(original) if isinstance(n, ast.stmt)]  # fmt: skip
        (tmp_path / "tests" / "test_hidden.py").write_bytes(content)
        outcomes = _run_pytest(tmp_path)
        assert outcomes.pop(name) == "failed", name
        assert set(outcomes.values()) == {"passed"}, (name, outcomes)


def test_a_perturbed_literal_keeps_its_quotes_and_stays_near_the_values_tests_hold() -> None:
    source = (
        b"from calc import add\n\n\ndef test_text():\n    assert add('a', 'b') == 'ab'\n\n\n"
        b"def test_number():\n    assert add(2, 3) == 5\n\n\ndef test_long():\n"
        b"    assert add([1], [2]) == [\n        1,\n        2,\n    ]\n"
    )
    twins = _twins(source)
    assert set(twins) == {"test_text", "test_number", "test_long"}
    text = _changed_lines(source, twins["test_text"][0])[1]
    assert text.startswith("+    assert add('a', 'b') == 'ab") and text.endswith("'")
    number = int(_changed_lines(source, twins["test_number"][0])[1].rpartition("== ")[2])
    assert 5 < number < 1000
    assert _changed_lines(source, twins["test_long"][0])[0] == "-        2,"


TABLES = b"""import pytest
from calc import add


@pytest.mark.parametrize(
    ("a", "b", "total"),
    [(1, 2, 3), pytest.param(2, 2, 4, id="two"), (5, 5, 10)],
)
def test_rows(a, b, total):
    assert add(a, b) == total


@pytest.mark.parametrize("n", [1, 2])
def test_input_and_expectation(n):
    assert add(n, 0) == n


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("m", [3])
def test_stacked(n, m):
    assert add(m, 0) == m


@pytest.mark.parametrize("n", [1, 2])
def test_used_before(n):
    value = add(n, n)
    assert value == n
"""


def test_a_table_twin_changes_one_row_whose_case_alone_must_fail(tmp_path: Path) -> None:
    twins = _twins(TABLES)
    # Only a parameter used as the expectation alone, in the test's one table, is perturbed,
    # and a pytest.param row is left as it is.
    assert set(twins) == {"test_rows"}
    content, twin = twins["test_rows"]
    assert twin.case in (0, 2) and twin.cases == 3
    assert len(_changed_lines(TABLES, content)) == 2
    (tmp_path / "calc.py").write_text(CALC)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_hidden.py").write_bytes(content)
    junit = tmp_path / "junit.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests",
         f"--junitxml={junit}"],
        cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True, check=False,
    )  # fmt: skip
    rows = [c for c in read_cases(junit) if c.name.startswith("test_rows[")]
    assert [c.outcome == "failed" for c in rows] == [n == twin.case for n in range(3)]
    assert twin_problem(twin, rows, "passed", must_be_there=True) is None
    passing = [JunitCase(c.classname, c.name, "passed") for c in rows]
    assert "passed although" in (twin_problem(twin, passing, "passed", must_be_there=True) or "")


def test_a_twin_is_only_made_where_its_assertion_is_sure_to_be_reached() -> None:
    source = b"""import pytest
from calc import add


def test_returns_early():
    if add(1, 1) == 2:
        return
    assert add(1, 1) == 2


def test_under_a_branch():
    if add(1, 1):
        assert add(1, 1) == 2


def test_in_a_loop():
    for n in range(3):
        assert add(n, 0) == n


@pytest.mark.skip(reason="never")
def test_declared_skip():
    assert add(1, 1) == 2


def test_no_equality():
    assert add(1, 1)


def test_defined_twice():
    assert add(1, 1) == 2


def test_defined_twice():
    assert add(2, 2) == 4
"""
    assert _twins(source, tries=40) == {}


def test_a_unittest_twin_keeps_its_class_and_fails_by_its_assertion(tmp_path: Path) -> None:
    source = (
        b"import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n"
        b"    def test_more(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
        b"    def test_pairs(self):\n        self.assertListEqual([add(0, 0)], [0])\n"
    )
    plan, contents = plant("unittest", [("tests/test_hidden.py", source)], random.Random(1))
    made = twin_file(plan, contents, random.Random(3))
    assert made is not None and made.twin.container == "TestAdd"
    planted = contents["tests/test_hidden.py"]
    assert len(_changed_lines(planted, made.contents["tests/test_hidden.py"])) == 2
    (tmp_path / "calc.py").write_text(CALC)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "test_hidden.py").write_bytes(made.contents["tests/test_hidden.py"])
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", "tests.test_hidden"], cwd=tmp_path,
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert f"{made.twin.name} (tests.test_hidden.TestAdd" in done.stderr
    assert f"FAIL: {made.twin.name} (tests.test_hidden.TestAdd" in done.stderr, done.stderr


def test_the_twin_file_is_the_planted_file_with_one_value_changed() -> None:
    head = b"from calc import add\n\n\n"
    files = [
        ("tests/test_one.py", head + b"def test_more():\n    assert add(2, 3) == 5\n"),
        ("tests/test_two.py", head + b"def test_zero():\n    assert add(0, 0) == 0\n"),
    ]
    plan, contents = plant("pytest", files, random.Random(4))
    drawn = set()
    for seed in range(20):
        made = twin_file(plan, contents, random.Random(seed))
        assert made is not None
        drawn.add(made.twin.name)
        differ = [t for t in contents if contents[t] != made.contents[t]]
        assert differ == [made.twin.target]
        assert len(_changed_lines(contents[made.twin.target], made.contents[made.twin.target])) == 2
    assert drawn == {"test_more", "test_zero"}


def test_a_twin_that_passes_skips_or_is_missing_beside_a_passing_original_is_a_finding() -> None:
    twin = Twin("tests/test_hidden.py", "", "test_more")
    cases = {
        o: [JunitCase("tests.test_hidden", "test_more", o)] for o in ("passed", "skipped", "failed")
    }
    assert "passed although" in (
        twin_problem(twin, cases["passed"], "passed", must_be_there=True) or ""
    )
    assert "was skipped while" in (
        twin_problem(twin, cases["skipped"], "passed", must_be_there=True) or ""
    )
    assert "missing" in (twin_problem(twin, [], "passed", must_be_there=True) or "")
    assert twin_problem(twin, cases["failed"], "passed", must_be_there=True) is None
    assert twin_problem(twin, cases["skipped"], "skipped", must_be_there=False) is None
    assert twin_problem(twin, [], None, must_be_there=False) is None


def test_a_skipped_hidden_test_is_not_passed_unless_its_file_declares_the_skip() -> None:
    source = (
        b"import sys, pytest\n\ndef test_plain():\n    assert 1 == 1\n\n"
        b"@pytest.mark.skipif(sys.platform == 'x', reason='x')\ndef test_marked():\n"
        b"    assert 1 == 1\n\ndef test_importorskip():\n    pytest.importorskip('nothing')\n"
    )
    hidden = _hidden(source)
    assert {t.name: t.may_skip for t in hidden} == {
        "test_plain": False,
        "test_marked": True,
        "test_importorskip": True,
    }
    skipped = [JunitCase("tests.test_hidden", t.name, "skipped") for t in hidden]
    found = unearned("pytest", hidden, skipped, selects=False)
    assert [(u.test.name, u.why) for u in found] == [("test_plain", "skipped")]
    missing = unearned("pytest", hidden, skipped[1:], selects=False)
    assert [(u.test.name, u.why) for u in missing] == [("test_plain", "missing")]
    assert unearned("pytest", hidden, skipped[1:], selects=True) == []


def test_a_run_whose_hidden_tests_all_skipped_counts_them_as_not_passed() -> None:
    source = b"from calc import add\n\ndef test_more():\n    assert add(2, 3) == 5\n"
    plan, _ = plant("pytest", [("tests/test_hidden.py", source)], random.Random(2))
    cases = [JunitCase("tests.test_hidden", "test_more", "skipped")]
    cases += [
        JunitCase("tests.test_hidden", c.name, "failed" if not c.must_pass else "passed")
        for c in plan.canaries
    ]
    judged = judge(plan, cases, exit_code=1, copy=Path(__file__).parent, selects=False,
                   passes_status=True)  # fmt: skip
    assert (judged.counts.errors, judged.counts.skipped) == (1, 0)
    assert judged.note == "hidden tests that did not pass: test_more (skipped)"


def test_more() -> None:
    """Named like the hidden test above, so that the name is defined in the copy."""


def test_the_javascript_skeleton_keeps_offsets_and_blanks_what_is_not_code() -> None:
    text = (
        "const a = 'it(\"x\")'; // test('no')\n"
        "const r = /[)]/g; /* it('no') */\n"
        "const t = `${add(1, 2)} test('no')`;\n"
    )
    code = skeleton(text)
    assert len(code) == len(text) and code.count("\n") == text.count("\n")
    assert "test(" not in code and "it(" not in code
    assert "add(1, 2)" in code


NODE = b"""const test = require('node:test');
const assert = require('node:assert');
const { add } = require('./calc.js');

test('adds small numbers', () => assert.strictEqual(add(2, 3), 5));
test('adds in a block', async () => {
  const x = add(1, 1);
  assert.deepStrictEqual([x, 'a'], [2, 'a']);
  assert.ok(x);
});
test.describe('group', () => {
  test.it('adds strings', function () {
    assert.equal(add('a', 'b'), 'ab');
  });
  test.it('returns early', () => { if (add(1, 1)) return; assert.equal(add(1, 2), 3); });
  test.skip('is skipped', () => assert.equal(add(1, 2), 4));
});
"""


def test_a_node_twin_changes_one_literal_in_place_and_fails_by_assertion(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        pytest.fail("node is needed")
    hidden = node_tests("hidden.test.js", NODE)
    assert hidden is not None
    assert {t.name: t.may_skip for t in hidden}["is skipped"] is True
    made: dict[str, bytes] = {}
    for seed in range(60):
        found = perturbed_node_file("hidden.test.js", NODE, hidden, random.Random(seed))
        assert found is not None
        made.setdefault(found[1].name, found[0])
    assert set(made) == {"adds small numbers", "adds in a block", "adds strings"}
    (tmp_path / "calc.js").write_text("exports.add = (a, b) => a + b;\n")
    for title, content in sorted(made.items()):
        assert len(_changed_lines(NODE, content)) == 2
        (tmp_path / "hidden.test.js").write_bytes(content)
        junit = tmp_path / "junit.xml"
        subprocess.run(
            ["node", "--test", "--test-reporter=junit", f"--test-reporter-destination={junit}",
             "hidden.test.js"],
            cwd=tmp_path, capture_output=True, check=False,
        )  # fmt: skip
        outcomes = {c.name: c.outcome for c in read_cases(junit)}
        assert outcomes.pop(title) == "failed", (title, outcomes)
        assert outcomes.pop("is skipped") == "skipped"
        assert set(outcomes.values()) == {"passed"}, (title, outcomes)


MIXIN_TESTS = b"""import unittest
from calc import add


class TestShared(unittest.TestCase):
    def test_shared(self):
        self.assertEqual(add(2, 3), 5)


class TestOnce(TestShared):
    pass


class TestTwice(TestShared):
    pass


class TestOwn(unittest.TestCase):
    def test_own(self):
        self.assertEqual(add(3, 3), 6)


def test_alone():
    assert add(1, 1) == 2
"""


def test_no_twin_is_drawn_in_a_class_that_other_classes_inherit() -> None:
    """A base class's tests run again under each subclass's name: its twin would fail there too,
    under names the twin's judgement does not know, and an honest change be found tampered."""
    found = _twins(MIXIN_TESTS)
    assert set(found) == {"test_own", "test_alone"}
    assert {twin.container for _, twin in found.values()} == {"TestOwn", ""}
