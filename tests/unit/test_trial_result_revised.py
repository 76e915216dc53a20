"""A recorded result is changed only through validated constructors: a misspelt field or a
wrong value is an error, never silently dropped or stored."""

from __future__ import annotations

import pydantic
import pytest

from harnessdrive.store.results import AgentSummary
from tests.trial_results import trial_result


def test_a_revision_is_validated_like_a_new_result() -> None:
    result = trial_result("t", "noop", status="completed", outcome="pass")
    revised = result.revised(note="checked", outcome="fail")
    assert (revised.note, revised.outcome, revised.trial_id) == ("checked", "fail", result.trial_id)
    with pytest.raises(TypeError, match="no field notes"):
        result.revised(notes="a misspelt field")
    with pytest.raises(pydantic.ValidationError):
        result.revised(outcome="passed")  # not an outcome


def test_the_final_round_is_revised_the_same_way() -> None:
    result = trial_result("t", "noop", status="completed", outcome="pass")
    changed = result.with_final_round(agent=AgentSummary(exit_code=3))
    assert changed.agent.exit_code == 3
    with pytest.raises(TypeError, match="no field agents"):
        result.with_final_round(agents=AgentSummary())
