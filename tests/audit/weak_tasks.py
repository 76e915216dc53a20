"""Tasks for the audit's tests: sound ones and ones weak in a known way, each named for its
weakness."""

from __future__ import annotations

from harnessdrive.testing.suites import TaskFiles

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
