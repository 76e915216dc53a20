"""Tasks for the audit's tests: sound ones and ones weak in a known way, each named for its
weakness."""

from __future__ import annotations

import shutil
from pathlib import Path

from harnessdrive.demo import DEMO_SUITE
from harnessdrive.testing.suites import FAST_PYTEST, TaskFiles

_CALC = {"calc.py": "def add(a, b):\n    return a - b\n"}
_CALC_FIXED = {"calc.py": "def add(a, b):\n    return a + b\n"}
_VALUE_TEST = (
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n    "
    "assert add(-4, 1) == -3\n"
)
SOUND_TEST = _VALUE_TEST


def sound() -> TaskFiles:
    return TaskFiles(
        "sound",
        files={**_CALC, "tests/test_visible.py": _VALUE_TEST},
        hidden={"tests/test_hidden.py": _VALUE_TEST},
        solution=_CALC_FIXED,
        protected=("tests/**",),
        prompt="Fix add() in calc.py so it adds its arguments.",
    )


def type_only() -> TaskFiles:
    return TaskFiles(
        "type-only",
        files={"calc.py": "def add(a, b):\n    raise NotImplementedError\n"},
        hidden={
            "tests/test_hidden.py": "from calc import add\n\n\ndef test_add():\n"
            "    assert isinstance(add(2, 3), int)\n"
        },
        solution=_CALC_FIXED,
        protected=("tests/**",),
        prompt="Implement add() in calc.py.",
    )


_HELPERS = "def same(got, want):\n    assert got == want\n    return True\n"


def unprotected(protected: tuple[str, ...] = ()) -> TaskFiles:
    return TaskFiles(
        "unprotected" if not protected else "protected",
        files={**_CALC, "tests/__init__.py": "", "tests/helpers.py": _HELPERS},
        hidden={
            "tests/test_hidden.py": "from calc import add\nfrom tests.helpers import same\n\n\n"
            "def test_add():\n    assert same(add(2, 3), 5)\n"
        },
        solution=_CALC_FIXED,
        protected=protected,
        prompt="Fix add() in calc.py so it adds its arguments.",
    )


def checks_in_a_loop() -> TaskFiles:
    """Hidden tests that check exact types and values, but inside a loop, where the grader
    cannot twin them: code that reads the expected value from the calling test passes."""
    return TaskFiles(
        "checks-in-a-loop",
        files={**_CALC, "tests/test_visible.py": _VALUE_TEST},
        hidden={
            "tests/test_hidden.py": "from calc import add\n\n\ndef test_add():\n"
            "    for a, b, want in [(2, 3, 5), (-4, 1, -3), (7, 7, 14)]:\n"
            "        got = add(a, b)\n        assert type(got) is int\n"
            "        assert got == want\n"
        },
        solution=_CALC_FIXED,
        protected=("tests/**",),
        prompt="Fix add() in calc.py so it adds its arguments.",
    )


def output_grep() -> TaskFiles:
    """A grade command that reads the runner's printed text: what the code under test prints
    is in it too."""
    return TaskFiles(
        "output-grep",
        files={**_CALC, "tests/test_visible.py": _VALUE_TEST},
        hidden={"tests/test_hidden.py": _VALUE_TEST},
        solution=_CALC_FIXED,
        protected=("tests/**",),
        command=f'{FAST_PYTEST} tests/test_hidden.py 2>&1 | grep -q " passed"',
        extra={"grade": {"junit": False}},
        prompt="Fix add() in calc.py so it adds its arguments.",
    )


def prompt_quotes() -> TaskFiles:
    return TaskFiles(
        "prompt-quotes",
        files={"greet.py": "def greet():\n    return 'hi'\n"},
        hidden={
            "tests/test_hidden.py": "from greet import greet\n\n\ndef test_greet():\n"
            "    assert greet() == 'Hello, harness!'\n"
        },
        solution={"greet.py": "def greet():\n    return 'Hello, harness!'\n"},
        protected=("tests/**",),
        prompt='Make `greet()` return the greeting; it must return "Hello, harness!".',
    )


SKIPLIST = DEMO_SUITE / "tasks" / "skiplist"


def differential(tasks: Path, name: str) -> Path:
    """The demo's differential task at ``tasks/<name>``, without its self-test fixtures (the
    audit does not need them): sound, its oracle and frozen cases in the task folder only."""
    folder = tasks / name
    tasks.mkdir(parents=True, exist_ok=True)
    shutil.copytree(SKIPLIST, folder, ignore=shutil.ignore_patterns("agents"))
    toml = folder / "task.toml"
    text = toml.read_text()
    text = text.replace('id = "skiplist"', f'id = "{name}"')
    toml.write_text(text[: text.index("[[check.fixtures]]")])
    return folder


def answers_in_repo(tasks: Path) -> Path:
    """A differential task whose repository holds every other hidden case with its answer,
    as a "dev" set: the candidate can read half its answers (a score it did not earn, no pass)."""
    folder = differential(tasks, "diff-answers-in-repo")
    rows = (folder / "cases" / "hidden.jsonl").read_text().splitlines(keepends=True)
    (folder / "repo" / "dev").mkdir()
    (folder / "repo" / "dev" / "cases.jsonl").write_text("".join(rows[::2]))
    return folder


def oracle_in_repo(tasks: Path) -> Path:
    """A differential task whose repository vendors the oracle's own code."""
    folder = differential(tasks, "diff-oracle-in-repo")
    (folder / "repo" / "vendor").mkdir()
    shutil.copy(folder / "oracle" / "skiplist_oracle.py", folder / "repo" / "vendor")
    return folder


IMPROVE = "fewer-comparisons"
# Imports the agent's code and prints the count it measured itself: whatever that code prints
# at exit is read as the value.
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


def improvement(suite: Path, name: str, *, in_process: bool = False) -> Path:
    """The demo's improvement task at ``suite/tasks/<name>``, measured through the objective
    runner (sound), or by an objective that reads the value from the measured process."""
    project = suite / "improve-project"
    if not project.exists():
        shutil.copytree(DEMO_SUITE / "improve-project", project)
    folder = suite / "tasks" / name
    shutil.copytree(DEMO_SUITE / "tasks" / IMPROVE, folder)
    toml = folder / "task.toml"
    text = toml.read_text().replace(f'id = "{IMPROVE}"', f'id = "{name}"')
    if in_process:
        (folder / "objective" / "in_process.py").write_text(IN_PROCESS_OBJECTIVE)
        start = text.index('command = "{measure}')
        end = text.index("]", text.index("inject = [")) + 1
        text = (
            text[:start]
            + 'command = "{python} .objective/in_process.py"\n'
            + 'inject = [{ source = "objective/in_process.py", '
            + 'target = ".objective/in_process.py" }]'
            + text[end:]
        )
    toml.write_text(text)
    return folder
