"""A mistyped harness name, option or effort gets the closest known one."""

from __future__ import annotations

import pytest

from harnessdrive.errors import UnknownHarnessError, UserError, did_you_mean
from harnessdrive.harnesses.registry import get_harness
from harnessdrive.tasks.models import VariantSpec


def test_the_closest_name_is_suggested_and_a_far_one_is_not() -> None:
    assert did_you_mean("refrence", ["noop", "reference"]) == " (did you mean 'reference'?)"
    assert did_you_mean("zzz", ["noop", "reference"]) == ""
    assert did_you_mean("REFERENCE", ["noop", "reference"]) == " (did you mean 'reference'?)"


def test_a_mistyped_harness_option_and_effort_get_suggestions() -> None:
    with pytest.raises(UnknownHarnessError, match=r"'codx' \(did you mean 'codex'\?\)"):
        get_harness("codx")
    codex = get_harness("codex")
    with pytest.raises(UserError, match=r"bianry \(did you mean 'binary'\?\)"):
        codex.check_variant(VariantSpec(harness="codex", options={"bianry": "x"}))
    with pytest.raises(UserError, match=r"'hihg' \(did you mean 'high'\?\)"):
        codex.check_variant(VariantSpec(harness="codex", effort="hihg"))
