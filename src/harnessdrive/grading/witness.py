"""Canary tests, and the twin file: a witness that forged results cannot imitate blindly.

Before the hidden test files go into the grading copy, each one that holds tests gets a few
more, under names drawn at random for this grading, written like ordinary tests: some must pass,
some must fail. After the run the report must show each canary with its known outcome, every
test of the hidden files, and no passing test that the copy does not define. Code that turns
every result into a pass, writes its own report or forces the exit status gets a canary wrong.
Canaries never count: they are taken out of the counts before the verdict. Every hidden test
must then earn its pass (grading/earned.py). One hidden test also gets a twin, in a run of its
own (:func:`twin_file`, grading/twin_run.py): code that equals everything or neuters the
assertions gets it wrong.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import posixpath
import random
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Generic, TypeVar

from harnessdrive.grading import earned, reference_outcomes
from harnessdrive.grading.earned import HiddenTest
from harnessdrive.grading.junit import JunitCase, JunitCounts, count_cases
from harnessdrive.grading.node_twins import node_tests, perturbed_node_file
from harnessdrive.grading.runners import RunnerKind
from harnessdrive.grading.twins import Twin, perturbed_file
from harnessdrive.grading.verdict import Finding

_WORDS = (
    "totals", "order", "rows", "keys", "empty", "names", "values", "count", "merge", "split",
    "sorted", "limit", "items", "first", "last", "unique", "groups", "lines", "parse", "format",
    "amounts", "records", "window", "ranking", "prefix", "suffix", "range", "default", "matches",
    "spaces",
)  # fmt: skip
_VERBS = ("keeps", "returns", "handles", "counts", "joins", "skips", "accepts", "checks")
_SOURCE_LIMIT = 2_000_000
_SKIP_DIRS = {".git", "node_modules", ".venv", "__pycache__"}
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_T = TypeVar("_T")


@dataclass(frozen=True)
class Canary:
    target: str
    """The hidden file it was written into."""
    container: str
    """The class that holds it (unittest), or ``""``."""
    name: str
    must_pass: bool


@dataclass(frozen=True)
class WitnessPlan:
    runner: RunnerKind
    canaries: tuple[Canary, ...]
    hidden_tests: tuple[tuple[str, str], ...]
    """(hidden file, test name) pairs the report must hold (Python runners)."""
    expected: tuple[HiddenTest, ...] = ()
    """Every test of the hidden files, each of which must earn its pass (grading/earned.py)."""
    reference: Mapping[str, str] | None = None
    """The reference's recorded outcome of each hidden test (grading/reference_outcomes.py)."""


@dataclass(frozen=True)
class Judgement:
    counts: JunitCounts
    """The report's counts without the canaries."""
    canaries: int
    expected_exit: int
    """The exit status of an honest run whose real tests all passed."""
    findings: tuple[Finding, ...]
    note: str | None = None
    outcomes: dict[str, str] | None = None
    """Each hidden test's outcome in this run (``target::name``), what a reference record holds."""


@dataclass(frozen=True)
class TwinFile:
    """What the twin run gets instead of the deciding run's hidden files."""

    twin: Twin
    contents: dict[str, bytes]
    """Every planted hidden file, the twin's with its one expectation perturbed."""


def plant(
    runner: RunnerKind,
    hidden: Sequence[tuple[str, bytes]],
    rng: random.Random | None = None,
) -> tuple[WitnessPlan, dict[str, bytes]]:
    """Canaries for each hidden test file: the plan and the files' new contents."""
    rng = rng or random.SystemRandom()
    canaries: list[Canary] = []
    expected: list[tuple[str, str]] = []
    contents: dict[str, bytes] = {}
    tests: list[HiddenTest] = []
    for target, data in hidden:
        found = _hidden_tests(target, data, runner)
        if found is None:
            continue
        taken = set(_taken_words(data))
        planted = [
            Canary(target, _name(rng, taken, camel=True) if runner == "unittest" else "",
                   _name(rng, taken, camel=False, title=runner == "node"), must_pass)
            for must_pass in (True, False)
        ]  # fmt: skip
        rng.shuffle(planted)
        canaries += planted
        tests += found
        if runner != "node":
            expected += [(target, test.name) for test in found]
        contents[target] = data.rstrip(b"\n") + b"\n" + _source(runner, planted, rng).encode()
    return WitnessPlan(runner, tuple(canaries), tuple(expected), tuple(tests)), contents


def _hidden_tests(target: str, data: bytes, runner: RunnerKind) -> list[HiddenTest] | None:
    if runner == "node":
        return _NODE_TESTS.get(data, target, lambda: node_tests(target, data))
    parsed = _python_tests(target, data, runner)
    if parsed is None:
        return None
    return [HiddenTest(target, name, may_skip) for name, may_skip in parsed[1]]


def twin_file(
    plan: WitnessPlan,
    contents: Mapping[str, bytes],
    rng: random.Random | None = None,
) -> TwinFile | None:
    """The planted hidden files (``contents``) with one expectation of one hidden test, drawn
    at random among every file's, perturbed in place; None when no test has one that can be."""
    rng = rng or random.SystemRandom()
    targets = sorted({t.target for t in plan.expected if t.target in contents})
    rng.shuffle(targets)
    for target in targets:
        data = contents[target]
        tests = [t for t in plan.expected if t.target == target]
        try:
            if plan.runner == "node":
                made = perturbed_node_file(target, data, tests, rng)
            else:
                parsed = _python_tests(target, data, plan.runner)
                made = (
                    None if parsed is None else perturbed_file(target, data, parsed[2], tests, rng)
                )
        except (RecursionError, ValueError, SyntaxError, MemoryError):
            made = None  # a file too deep or odd to perturb gets canaries only
        if made is not None:
            return TwinFile(made[1], {**contents, target: made[0]})
    return None


def judge(
    plan: WitnessPlan,
    cases: Sequence[JunitCase],
    *,
    exit_code: int | None,
    copy: Path,
    selects: bool,
    passes_status: bool,
) -> Judgement:
    """Compare the report with what the canaries and the hidden files say it must hold."""
    own: dict[Canary, list[JunitCase]] = {c: [] for c in plan.canaries}
    real: list[JunitCase] = []
    for case in cases:
        canary = next((c for c in plan.canaries if _is(case, c)), None)
        (own[canary] if canary else real).append(case)
    counts = count_cases(real)
    skipped_whole = () if selects else _skipped_whole(plan, own, real)
    if skipped_whole:
        # A hidden file skipped as a whole ran none of its tests: that is never a pass.
        counts = replace(
            counts,
            total=counts.total + len(skipped_whole),
            errors=counts.errors + len(skipped_whole),
        )
    honest_fail_seen = any(
        not c.must_pass and any(r.outcome == "failed" for r in own[c]) for c in plan.canaries
    )
    expected_exit = 1 if honest_fail_seen else 0
    would_pass = counts.total > 0 and counts.failed == 0 and counts.errors == 0
    findings: list[Finding] = []

    def finding(code: str, path: str | None, detail: str) -> None:
        findings.append(Finding(code=code, path=path, detail=detail))

    for canary, seen in own.items():
        where = canary.target
        if not canary.must_pass and any(r.outcome in ("passed", "skipped") for r in seen):
            finding("witness-mismatch", where, "a test that must fail was reported as passed")
        elif not seen and would_pass and not selects:
            finding("witness-mismatch", where, "a planted test is missing from the report")
        elif canary.must_pass and seen and would_pass and any(r.outcome != "passed" for r in seen):
            finding("witness-mismatch", where, "a test that must pass was reported failing")
    if honest_fail_seen and exit_code == 0 and passes_status:
        finding("witness-mismatch", None, "exit status 0 although tests that must fail failed")
    if would_pass and not selects:
        for target, name in plan.hidden_tests:
            if not _ran(real, target, name):
                finding("report-mismatch", target, f"hidden test {name} is missing from the report")
    if would_pass and plan.runner != "node":
        # Items that are not test functions (doctests, files of other kinds) are left alone.
        passed = {
            _base(r.name).rpartition(".")[2] for r in real if r.outcome in ("passed", "skipped")
        }
        passed = {name for name in passed if name.startswith("test")}
        for name in sorted(_undefined(passed, copy)):
            finding("report-mismatch", None, f"reported test {name} is not in the grading copy")
    notes = []
    if skipped_whole:
        notes.append(f"hidden tests not run: {', '.join(skipped_whole)} skipped whole")
    not_earned = earned.unearned(
        plan.runner,
        plan.expected,
        real,
        selects=selects,
        skipped_whole=skipped_whole,
        reference=plan.reference,
    )
    if not_earned:
        counts = earned.counted_as_not_passed(plan.runner, counts, not_earned, real)
        notes.append(earned.describe(not_earned))
    note = "; ".join(notes) or None
    planted = sum(len(v) for v in own.values())
    outcomes = {
        reference_outcomes.key(t.target, t.name): reference_outcomes.outcome_of(
            [c for c in real if earned.is_case_of(plan.runner, c, t)]
        )
        for t in plan.expected
    }
    return Judgement(counts, planted, expected_exit, tuple(findings), note, outcomes)


def _skipped_whole(
    plan: WitnessPlan, own: dict[Canary, list[JunitCase]], real: Sequence[JunitCase]
) -> tuple[str, ...]:
    """Hidden files none of whose tests ran, with a skip reported in their name."""
    found = []
    for target in dict.fromkeys(c.target for c in plan.canaries):
        stem = _stem(target)
        if any(own[c] for c in plan.canaries if c.target == target) or any(
            _ran(real, target, name) for t, name in plan.hidden_tests if t == target
        ):
            continue
        if any(r.outcome == "skipped" and (stem in r.classname or stem in r.name) for r in real):
            found.append(target)
    return tuple(found)


def _stem(target: str) -> str:
    return posixpath.splitext(posixpath.basename(target))[0]


def _ran(real: Sequence[JunitCase], target: str, name: str) -> bool:
    stem = _stem(target)
    return any(_base(r.name) == name and stem in r.classname for r in real)


def canary_file(junit: Path) -> Path:
    """Where the canaries of a recorded junit report are listed once the grading is over."""
    return junit.with_name(junit.stem + ".canaries.json")


def write_canaries(junit: Path, plan: WitnessPlan) -> None:
    """List ``plan``'s canaries beside the recorded report, so a reader can tell them from the
    real tests (``harnessdrive show``); written after the run, when no agent can see it."""
    rows = [{"container": c.container, "name": c.name} for c in plan.canaries]
    canary_file(junit).write_text(json.dumps(rows) + "\n")


def is_canary(classname: str, name: str, canaries: Iterable[tuple[str, str]]) -> bool:
    """Whether a report's test case is one of ``canaries`` ((container, name) pairs)."""
    case = JunitCase(classname, name, "passed")
    return any(_is(case, Canary("", container, canary, False)) for container, canary in canaries)


def _is(case: JunitCase, canary: Canary) -> bool:
    if " " in canary.name:  # a node test's title
        return case.name == canary.name
    if _base(case.name) != canary.name:
        return False
    return not canary.container or case.classname.rpartition(".")[2] == canary.container


def _base(name: str) -> str:
    return name.split("[", 1)[0].split(" ", 1)[0]


def _name(rng: random.Random, taken: set[str], *, camel: bool, title: bool = False) -> str:
    while True:
        words = [rng.choice(_VERBS), *rng.sample(_WORDS, 2)]
        name = "Test" + "".join(w.title() for w in words) if camel else "test_" + "_".join(words)
        if title:
            name = " ".join(words)
        if name not in taken:
            taken.add(name)
            return name


class _ByContent(Generic[_T]):
    """What was worked out from a file's content, remembered by its digest (the newest few
    hundred): every grading copy of a task plants in the same hidden files."""

    _KEPT = 256

    def __init__(self) -> None:
        self._known: dict[tuple[bytes, str], _T] = {}
        self._lock = threading.Lock()

    def get(self, data: bytes, tag: str, work_out: Callable[[], _T]) -> _T:
        key = (hashlib.sha256(data).digest(), tag)
        with self._lock:
            if key in self._known:
                return self._known[key]
        value = work_out()
        with self._lock:
            if len(self._known) >= self._KEPT:
                self._known.pop(next(iter(self._known)))
            self._known[key] = value
        return value


_ParsedTests = tuple[tuple[str, ...], tuple[tuple[str, bool], ...], ast.Module]
_TESTS_OF: _ByContent[_ParsedTests | None] = _ByContent()
_NODE_TESTS: _ByContent[list[HiddenTest] | None] = _ByContent()
_WORDS_OF: _ByContent[frozenset[str]] = _ByContent()


def _python_tests(target: str, data: bytes, runner: RunnerKind) -> _ParsedTests | None:
    """The tests the runner collects from a hidden file (None: it holds no tests to plant by),
    each with whether the file lets it skip, and the parsed file (read, never changed).

    Remembered by content: parsing a large test file costs more than the rest of planting.
    """
    if not target.endswith(".py"):
        return None
    return _TESTS_OF.get(data, runner, lambda: _parse_tests(data, runner))


def _taken_words(data: bytes) -> frozenset[str]:
    """Every word of a hidden file (canary names must differ), remembered by content too."""
    return _WORDS_OF.get(
        data, "words", lambda: frozenset(_words(data.decode("utf-8", errors="replace")))
    )


def _parse_tests(data: bytes, runner: RunnerKind) -> _ParsedTests | None:
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):
        return None
    cases: set[str] = set()
    names: list[str] = []
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    for node in tree.body:
        if runner == "pytest" and isinstance(node, _FUNCTIONS) and _collected(node):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef) and _test_class(node, cases, runner):
            cases.add(node.name)
            # A mixin of the same file lends its tests to the test class: they run, and can be
            # skipped, under the test class's name, so they are hidden tests too.
            for holder in (node, *_mixins(node, classes, cases)):
                names += [
                    item.name
                    for item in holder.body
                    if isinstance(item, _FUNCTIONS) and _collected(item)
                ]
    if any(_assigns(node, "__test__") for node in tree.body) or not names:
        return None
    try:
        found = earned.python_hidden("", tree, names)
    except RecursionError:
        return None
    return tuple(names), tuple((t.name, t.may_skip) for t in found), tree


def _mixins(
    node: ast.ClassDef, classes: Mapping[str, ast.ClassDef], cases: set[str]
) -> list[ast.ClassDef]:
    """The classes of the same file that ``node`` inherits from, directly or not, other than
    test classes (their tests are counted as theirs)."""
    found: list[ast.ClassDef] = []
    pending = _base_names(node)
    while pending:
        base = classes.get(pending.pop())
        if base is None or base is node or base.name in cases or base in found:
            continue
        found.append(base)
        pending += _base_names(base)
    return found


def _base_names(node: ast.ClassDef) -> list[str]:
    # A class of the same file is named plainly; anything else is not a mixin of this file.
    return [b.id for b in node.bases if isinstance(b, ast.Name)]


def _collected(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A ``test*`` function that is not a fixture."""
    decorators = [ast.unparse(d) for d in function.decorator_list]
    return function.name.startswith("test") and not any("fixture" in d for d in decorators)


def _test_class(node: ast.ClassDef, cases: set[str], runner: RunnerKind) -> bool:
    if any(_assigns(item, "__test__") for item in node.body):
        return False
    bases = [ast.unparse(b).rpartition(".")[2] for b in node.bases]
    if any(b.endswith("TestCase") or b in cases for b in bases):
        return True
    has_init = any(isinstance(i, _FUNCTIONS) and i.name == "__init__" for i in node.body)
    return runner == "pytest" and node.name.startswith("Test") and not has_init


def _assigns(node: ast.stmt, name: str) -> bool:
    return isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == name for t in node.targets
    )


def _check(rng: random.Random, must_pass: bool) -> tuple[str, str, str]:
    """Data, an expression over it and the value it must (or must not) equal."""
    values = rng.sample(range(2, 60), rng.randint(3, 5))
    kind = rng.choice(("sum", "len", "max", "min", "sorted"))
    right: int | list[int] = {
        "sum": sum(values),
        "len": len(values),
        "max": max(values),
        "min": min(values),
    }.get(kind, sorted(values))
    if not must_pass:
        right = right[1:] if isinstance(right, list) else right + rng.randint(1, 9)
    return repr(values), kind, repr(right)


def _source(runner: RunnerKind, canaries: Iterable[Canary], rng: random.Random) -> str:
    parts: list[str] = []
    for canary in canaries:
        data, kind, right = _check(rng, canary.must_pass)
        var = rng.choice(("values", "rows", "amounts", "items"))
        if runner == "pytest":
            # A failure without a traceback: pytest renders a traceback by parsing the whole
            # file, which costs more per failing canary than many a test run.
            parts.append(
                f"\n\ndef {canary.name}():\n    import pytest\n\n    {var} = {data}\n"
                f"    if {kind}({var}) != {right}:\n"
                f'        pytest.fail(f"{kind}({var}) is {{{kind}({var})!r}}", pytrace=False)\n'
            )
        elif runner == "unittest":
            parts.append(
                f"\n\nclass {canary.container}(unittest.TestCase):\n"
                f"    def {canary.name}(self):\n        {var} = {data}\n"
                f"        self.assertEqual({kind}({var}), {right})\n"
            )
        else:
            js = {"sum": f"{var}.reduce((a, b) => a + b, 0)", "len": f"{var}.length",
                  "max": f"Math.max(...{var})", "min": f"Math.min(...{var})",
                  "sorted": f"[...{var}].sort((a, b) => a - b)"}[kind]  # fmt: skip
            title = canary.name
            parts.append(
                f"\nPromise.all([import('node:test'), import('node:assert')]).then("
                f"([{{ test }}, {{ strict: assert }}]) => {{\n  test({title!r}, () => {{\n"
                f"    const {var} = {data};\n    assert.deepEqual({js}, {right});\n  }});\n}});\n"
            )
    head = "\n\nimport unittest\n" if runner == "unittest" else ""
    return head + "".join(parts)


def _undefined(names: set[str], copy: Path) -> set[str]:
    """The names among ``names`` that occur in no Python file of the copy.

    Files that look like tests are read first: they define nearly every test name, so the rest
    of a large project is usually never read.
    """
    missing = {n for n in names if n}
    if not missing:
        return missing
    tests: list[Path] = []
    others: list[Path] = []
    for folder, dirs, files in os.walk(copy):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
        in_tests = "test" in os.path.relpath(folder, copy).lower()
        for file in files:
            if file.endswith(".py"):
                looks = in_tests or file.startswith("test") or file.endswith("_test.py")
                (tests if looks else others).append(Path(folder) / file)
    for path in tests + others:
        try:
            if path.is_symlink() or path.stat().st_size > _SOURCE_LIMIT:
                continue
            missing -= _words(path.read_text(errors="replace"))
        except OSError:
            continue
        if not missing:
            break
    return missing


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text))
