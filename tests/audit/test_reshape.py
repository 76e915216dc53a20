"""The reference rewritten with its meaning kept: what changes, what must not."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from harnessdrive.checking.reshape import NoReshape, reshape_module

BASE = '''"""Prices."""

import re


def untouched(x):
    # stays exactly as it is
    return x  +  1


def total(prices, discount):
    return sum(prices)
'''

NEW = '''"""Prices."""

import re


def untouched(x):
    # stays exactly as it is
    return x  +  1


def total(prices, discount):
    # The discount applies once, to the sum.
    subtotal = sum(prices)
    if discount is None:
        discount = 0
    if discount:
        subtotal = subtotal - discount
    else:
        subtotal = subtotal + 0
    try:
        result = max(subtotal, 0)
    except TypeError as error:
        raise ValueError(str(error)) from None
    return [x for x in (result,)][0] if result != 0 else 0
'''


def _load(text: str) -> dict[str, Any]:
    space: dict[str, Any] = {}
    exec(compile(text, "<test>", "exec"), space)  # the module under test, as written
    return space


def test_changed_function_is_rewritten_and_gives_the_same_results() -> None:
    reshaped = reshape_module(BASE, NEW)
    assert reshaped.text != NEW
    (change,) = reshaped.changes
    assert change.startswith("total: renamed subtotal to subtotal_v")
    assert "moved 1 returned expression(s) into a helper" in change
    assert "swapped the branches of 1 if(s)" in change
    assert "reordered 2 comparison(s)" in change
    assert "subtotal_v" in reshaped.text and "def _result():" in reshaped.text
    assert "None is discount" in reshaped.text
    # `discount` is a parameter and `error` is bound by except: neither may be renamed.
    assert "discount_v" not in reshaped.text and "error_v" not in reshaped.text
    before, after = _load(NEW), _load(reshaped.text)
    for prices, discount in (([3, 4], 2), ([1], 5), ([2, 2], 0), ([], None), ([1], 1)):
        assert after["total"](prices, discount) == before["total"](prices, discount)
    with pytest.raises(ValueError):
        after["total"]([1j], 1)  # max() of a complex number: raised inside the try


def test_functions_the_reference_did_not_change_stay_byte_for_byte() -> None:
    reshaped = reshape_module(BASE, NEW)
    kept = "def untouched(x):\n    # stays exactly as it is\n    return x  +  1\n"
    assert kept in reshaped.text
    assert reshaped.text.startswith('"""Prices."""\n\nimport re\n')


def test_a_method_keeps_its_docstring_exactly() -> None:
    base = "class Cart:\n    def total(self):\n        return 0\n"
    new = (
        "class Cart:\n"
        "    def total(self, items=()):\n"
        '        """Sum the items.\n\n        Each one counts once.\n        """\n'
        "        found = 0\n"
        "        for item in items:\n"
        "            found += item\n"
        "        return found * 1\n"
    )
    reshaped = reshape_module(base, new)
    assert reshaped.changes[0].startswith("Cart.total: renamed found to found_v, item to item_v")
    before, after = _load(new)["Cart"], _load(reshaped.text)["Cart"]
    assert after.total.__doc__ == before.total.__doc__
    assert after().total([1, 2, 3]) == 6


def test_a_function_that_reads_its_own_frame_keeps_its_names() -> None:
    new = 'def show(a):\n    b = a + 1\n    return "{b}".format(**locals())\n'
    reshaped = reshape_module(None, new)
    assert reshaped.changes == ("show: reformatted",)
    assert "b_v" not in reshaped.text and "_result" not in reshaped.text
    assert _load(reshaped.text)["show"](1) == "2"
    # Written as unparse would write it, nothing is left to change: no rewrite.
    with pytest.raises(NoReshape, match="could be written differently"):
        reshape_module(None, reshaped.text)


def test_names_a_nested_scope_declares_global_are_left_alone() -> None:
    new = (
        "counter = 0\n\n\ndef bump():\n    counter  =  5\n\n"
        "    def inner():\n        global counter\n        counter += 1\n"
        "    inner()\n    return counter\n"
    )
    text = reshape_module(None, new).text
    assert "counter_v" not in text
    space = _load(text)
    assert space["bump"]() == 5 and space["counter"] == 1


def test_helper_is_not_extracted_from_a_generator_expression_that_yields() -> None:
    new = "def pairs(items):\n    for item in items:\n        yield item\n    return (yield)\n"
    reshaped = reshape_module(None, new)
    assert "_result" not in reshaped.text
    ast.parse(reshaped.text)


def test_no_changed_function_means_no_rewrite() -> None:
    with pytest.raises(NoReshape, match="changes no function"):
        reshape_module(BASE, BASE.replace("import re", "import os"))


def test_a_file_that_does_not_parse_has_no_rewrite() -> None:
    with pytest.raises(NoReshape, match="does not parse"):
        reshape_module(None, "def broken(:\n")


def test_line_numbers_hold_past_a_form_feed() -> None:
    # str.splitlines() would count the form feed as a line break and shift every line after.
    new = "x = 1\n\x0c\ndef f(a):\n    b = a\n    return b + 1\n"
    reshaped = reshape_module(None, new)
    assert reshaped.text.startswith("x = 1\n\x0c\ndef f(a):\n    b_v = a\n")
    assert _load(reshaped.text)["f"](1) == 2
