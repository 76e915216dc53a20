"""Tasks marked as mined, for ``check``'s checks of mined tasks: one whose hidden tests accept
any correct change, one whose hidden tests pin the reference's exact text, one whose commit
changed only a docstring, and one whose reference changes no Python."""

from __future__ import annotations

from typing import Any

from harnessdrive.testing.suites import TaskFiles

_CALC = {"calc.py": "def total(prices, discount):\n    return sum(prices)\n"}
_FIXED = (
    "def total(prices, discount):\n"
    "    # The discount applies once, to the sum.\n"
    "    subtotal = sum(prices)\n"
    "    if discount:\n"
    "        subtotal = subtotal - discount\n"
    "    else:\n"
    "        subtotal = subtotal + 0\n"
    "    return max(subtotal, 0)\n"
)
_VALUES = (
    "from calc import total\n\n\ndef test_total():\n"
    "    assert total([3, 4], 2) == 5\n    assert total([1], 5) == 0\n"
    "    assert total([2, 2], 0) == 4\n"
)
_SHAPE = (
    "import pathlib\n\nfrom calc import total\n\n\ndef test_total():\n"
    "    assert total([3, 4], 2) == 5\n"
    "    assert 'subtotal = subtotal - discount' in pathlib.Path('calc.py').read_text()\n"
)


def _mined(change_kind: str = "code") -> dict[str, Any]:
    return {"metadata": {"mined": True, "commit": "0" * 40, "change_kind": change_kind}}


def sound() -> TaskFiles:
    return TaskFiles(
        "mined-sound",
        files={**_CALC, "tests/test_calc.py": _VALUES},
        hidden={"tests/test_calc.py": _VALUES},
        solution={"calc.py": _FIXED},
        prompt="total() ignores the discount.",
        extra=_mined(),
    )


def exact_shape() -> TaskFiles:
    return TaskFiles(
        "mined-shape",
        files={**_CALC, "tests/test_calc.py": _VALUES},
        hidden={"tests/test_calc.py": _SHAPE},
        solution={"calc.py": _FIXED},
        prompt="total() ignores the discount.",
        extra=_mined(),
    )


_DOCUMENTED = 'def greet():\n    """Say hello."""\n    return "hi"\n'


def docstring_only() -> TaskFiles:
    return TaskFiles(
        "mined-docstring",
        files={"greet.py": 'def greet():\n    return "hi"\n'},
        hidden={
            "tests/test_greet.py": "from greet import greet\n\n\ndef test_doc():\n"
            "    assert greet.__doc__ == 'Say hello.'\n"
        },
        solution={"greet.py": _DOCUMENTED},
        prompt="greet() has no docstring.",
        extra=_mined("comments-only"),
    )


def no_python() -> TaskFiles:
    return TaskFiles(
        "mined-data",
        files={"limit.txt": "3\n", "tests/test_limit.py": "def test_limit():\n    pass\n"},
        hidden={
            "tests/test_limit.py": "import pathlib\n\n\ndef test_limit():\n"
            "    assert pathlib.Path('limit.txt').read_text() == '5\\n'\n"
        },
        solution={"limit.txt": "5\n"},
        prompt="The limit should be 5.",
        extra=_mined(),
    )
