"""The witness: canaries planted in hidden test files, and the report judged against them."""

from __future__ import annotations

import ast
import random
import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.grading.junit import JunitCase, read_cases
from harnessdrive.grading.runners import RunnerKind
from harnessdrive.grading.witness import Canary, WitnessPlan, judge, plant

PYTEST_FILE = b"from calc import add\n\n\ndef test_more():\n    assert add(2, 3) == 5\n"
UNITTEST_FILE = (
    b"import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n"
    b"    def test_more(self):\n        self.assertEqual(add(2, 3), 5)\n"
)
NODE_FILE = (
    b"const test = require('node:test');\nconst assert = require('node:assert');\n"
    b"const { add } = require('../calc.js');\n"
    b"test('adds', () => assert.strictEqual(add(2, 3), 5));\n"
)


def planted(
    runner: RunnerKind, target: str, data: bytes, seed: int = 1
) -> tuple[WitnessPlan, bytes]:
    plan, contents = plant(runner, [(target, data)], random.Random(seed))
    return plan, contents[target]


def run_file(tmp_path: Path, runner: RunnerKind, target: str, data: bytes) -> list[JunitCase]:
    """Run one planted file for real with ``runner`` and read its junit report."""
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "calc.js").write_text("exports.add = (a, b) => a + b;\n")
    path = tmp_path / target
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    junit = tmp_path / "junit.xml"
    launcher = Path(__file__).parents[2] / "src/harnessdrive/grading/boot/hdrun.py"
    if runner == "pytest":
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", target,
                f"--junitxml={junit}"]  # fmt: skip
        env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    elif runner == "unittest":
        argv = [sys.executable, str(launcher), "unittest", "discover", "-s", "tests", "-t", "."]
        env = {"HARNESSDRIVE_JUNIT": str(junit)}
    else:
        argv = ["node", "--test", "--test-reporter=junit", f"--test-reporter-destination={junit}",
                target]  # fmt: skip
        env = {}
    subprocess.run(argv, cwd=tmp_path, env={"PATH": "/usr/bin:/bin", **env}, check=False,
                   capture_output=True)  # fmt: skip
    return read_cases(junit)


@pytest.mark.parametrize(
    ("runner", "target", "data"),
    [
        ("pytest", "tests/test_hidden.py", PYTEST_FILE),
        ("unittest", "tests/test_hidden.py", UNITTEST_FILE),
        ("node", "test/hidden.test.js", NODE_FILE),
    ],
)
def test_planted_canaries_come_out_as_planned_in_a_real_run(
    tmp_path: Path, runner: RunnerKind, target: str, data: bytes
) -> None:
    plan, content = planted(runner, target, data)
    assert content.startswith(data.rstrip(b"\n"))
    assert {c.must_pass for c in plan.canaries} == {True, False}
    if runner == "unittest":
        (tmp_path / "tests").mkdir()
        (tmp_path / "tests" / "__init__.py").write_text("")
    cases = run_file(tmp_path, runner, target, content)
    judged = judge(plan, cases, exit_code=1, copy=tmp_path, selects=False, passes_status=True)
    assert judged.findings == ()
    assert judged.canaries == 2
    assert (judged.counts.total, judged.counts.passed) == (1, 1)
    assert judged.expected_exit == 1


def test_canary_names_are_drawn_anew_and_read_like_tests() -> None:
    names = set()
    for seed in range(20):
        plan, content = planted("pytest", "tests/test_hidden.py", PYTEST_FILE, seed)
        names |= {c.name for c in plan.canaries}
        tree = ast.parse(content)
        functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        assert functions[0] == "test_more" and len(functions) == 3
        assert all(name.startswith("test_") for name in functions)
    assert len(names) > 30


def case(name: str, outcome: str, classname: str = "tests.test_hidden") -> JunitCase:
    return JunitCase(classname, name, outcome)  # type: ignore[arg-type]


def plan_of(*canaries: tuple[str, bool]) -> WitnessPlan:
    return WitnessPlan(
        "pytest",
        tuple(Canary("tests/test_hidden.py", "", name, ok) for name, ok in canaries),
        (("tests/test_hidden.py", "test_more"),),
    )


def codes(plan: WitnessPlan, cases: list[JunitCase], exit_code: int = 1, **kw: bool) -> list[str]:
    copy = Path(__file__).parent  # this file defines test_more
    options = {"selects": False, "passes_status": True, **kw}
    return [f.code for f in judge(plan, cases, exit_code=exit_code, copy=copy, **options).findings]


PLAN = plan_of(("test_keeps_rows_order", True), ("test_counts_lines_empty", False))
HONEST = [
    case("test_more", "passed"),
    case("test_keeps_rows_order", "passed"),
    case("test_counts_lines_empty", "failed"),
]


def test_more() -> None:
    """Named like the hidden test of PLAN, so that the name is defined in the copy."""
    assert judge(PLAN, HONEST, exit_code=1, copy=Path(__file__).parent, selects=False,
                 passes_status=True).findings == ()  # fmt: skip


def test_an_honest_report_has_no_finding_and_the_canaries_are_not_counted() -> None:
    judged = judge(PLAN, HONEST, exit_code=1, copy=Path(__file__).parent, selects=False,
                   passes_status=True)  # fmt: skip
    assert (judged.counts.total, judged.counts.passed, judged.canaries) == (1, 1, 2)


def test_an_expected_failure_reported_as_passed_is_a_finding_whatever_else_happened() -> None:
    forged = [case(c.name, "passed") for c in HONEST]
    assert codes(PLAN, forged) == ["witness-mismatch"]
    failing = [case("test_more", "failed"), case("test_counts_lines_empty", "skipped")]
    assert "witness-mismatch" in codes(PLAN, failing)


def test_a_report_without_the_canaries_is_a_finding_unless_the_command_selects_tests() -> None:
    only_real = [case("test_more", "passed")]
    assert codes(PLAN, only_real, exit_code=0) == ["witness-mismatch", "witness-mismatch"]
    assert codes(PLAN, only_real, exit_code=0, selects=True) == []


def test_exit_zero_beside_failed_canaries_is_a_finding_unless_the_command_masks_it() -> None:
    assert codes(PLAN, HONEST, exit_code=0) == ["witness-mismatch"]
    assert codes(PLAN, HONEST, exit_code=0, passes_status=False) == []


def test_a_missing_hidden_test_or_an_invented_one_is_a_report_mismatch(tmp_path: Path) -> None:
    (tmp_path / "test_hidden.py").write_text("def test_more():\n    pass\n")
    invented = "test_" + "nobody_wrote_this"  # not spelled out whole in any file of the copy
    without_hidden = [c for c in HONEST if c.name != "test_more"] + [case(invented, "passed")]
    found = judge(PLAN, without_hidden, exit_code=1, copy=tmp_path, selects=False,
                  passes_status=True).findings  # fmt: skip
    assert sorted(f.detail for f in found if f.code == "report-mismatch") == [
        "hidden test test_more is missing from the report",
        f"reported test {invented} is not in the grading copy",
    ]
    honest = judge(PLAN, HONEST, exit_code=1, copy=tmp_path, selects=False, passes_status=True)
    assert honest.findings == ()


def test_a_test_name_defined_outside_the_test_files_is_still_found(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_hidden.py").write_text("def test_more():\n    pass\n")
    (tmp_path / "src").mkdir()
    # A helper module that makes tests: test files are read first, the rest when needed.
    (tmp_path / "src" / "makers.py").write_text("def test_made_by_a_helper():\n    pass\n")
    cases = [*HONEST, case("test_made_by_a_helper", "passed")]
    judged = judge(PLAN, cases, exit_code=1, copy=tmp_path, selects=False, passes_status=True)
    assert judged.findings == ()


def test_a_failing_pytest_canary_reports_its_message_without_a_traceback(tmp_path: Path) -> None:
    """pytest renders a traceback by parsing the whole test file: a cost per failing canary
    that every test run would pay."""
    plan, content = planted("pytest", "tests/test_hidden.py", PYTEST_FILE)
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_hidden.py").write_bytes(content)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_hidden.py"],
        cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    failing = next(c for c in plan.canaries if not c.must_pass)
    section = done.stdout.split(f" {failing.name} ", 1)[1].split("short test summary", 1)[0]
    assert " is " in section  # the message alone
    assert "def " not in section and "test_hidden.py:" not in section
    assert "1 failed, 2 passed" in done.stdout


def test_a_failing_run_is_never_made_worse_by_missing_canaries() -> None:
    broken = [case("tests.test_hidden", "error", classname="")]
    assert codes(PLAN, broken) == []


def test_doctests_and_parametrized_ids_of_an_honest_run_are_not_findings(tmp_path: Path) -> None:
    (tmp_path / "test_hidden.py").write_text("def test_more(x):\n    pass\n")
    cases = [
        *HONEST,
        case("test_more[1.5-a b]", "passed"),
        case("calc.add", "passed", classname="calc"),
        case("tests/data/spec.yaml::anything", "passed", classname="tests.data"),
    ]
    found = judge(PLAN, cases, exit_code=1, copy=tmp_path, selects=False, passes_status=True)
    assert found.findings == ()


def test_only_what_the_runner_collects_is_expected_in_the_report() -> None:
    source = (
        b"import pytest, unittest\n\n@pytest.fixture\ndef test_data():\n    return 1\n\n"
        b"def test_real(test_data):\n    assert test_data\n\n"
        b"class TestHelper:\n    def __init__(self):\n        pass\n\n"
        b"    def test_not_collected(self):\n        pass\n\n"
        b"class Base(unittest.TestCase):\n    def test_base(self):\n        pass\n\n"
        b"class Derived(Base):\n    def test_derived(self):\n        pass\n"
    )
    pytest_plan, _ = planted("pytest", "tests/test_x.py", source)
    assert [name for _, name in pytest_plan.hidden_tests] == [
        "test_real",
        "test_base",
        "test_derived",
    ]
    unittest_plan, _ = planted("unittest", "tests/test_x.py", source)
    assert [name for _, name in unittest_plan.hidden_tests] == ["test_base", "test_derived"]
    not_collected = b"__test__ = False\ndef test_a():\n    pass\n"
    plan, contents = plant("pytest", [("t/test_x.py", not_collected)])
    assert plan.canaries == () and contents == {}


def test_a_hidden_file_skipped_whole_is_no_pass_and_no_finding() -> None:
    skipped = [case("test_small", "passed", "tests.test_visible"),
               case("tests.test_hidden", "skipped", classname="")]  # fmt: skip
    judged = judge(PLAN, skipped, exit_code=0, copy=Path(__file__).parent, selects=False,
                   passes_status=True)  # fmt: skip
    assert judged.findings == ()
    assert judged.counts.errors == 1
    assert judged.note == "hidden tests not run: tests/test_hidden.py skipped whole"


def test_a_mixins_tests_count_and_odd_inheritance_neither_loops_nor_lends() -> None:
    # A cycle of bases (it parses, though it would not run), a base reached through an
    # attribute or a call, and a chain of mixins deeper than Python's own recursion limit.
    chain = "".join(f"class M{i}(M{i + 1}):\n    pass\n" for i in range(2000))
    source = (
        "import unittest\n\n"
        "class M2000:\n    def test_deep(self):\n        pass\n\n"
        f"{chain}\n"
        "class Loop(Loop2):\n    def test_loop(self):\n        pass\n\n"
        "class Loop2(Loop):\n    pass\n\n"
        "class Odd(unittest.mock.Base, make()):\n    def test_odd(self):\n        pass\n\n"
        "class Case(unittest.TestCase, M0, Loop2, Odd):\n    def test_own(self):\n        pass\n"
    )
    plan, _ = plant("unittest", [("tests/test_m.py", source.encode())])
    names = {name for _, name in plan.hidden_tests}
    assert names == {"test_own", "test_deep", "test_loop", "test_odd"}
