from __future__ import annotations

import pytest

from harnessdrive.harnesses.base import AgentRun
from harnessdrive.protocols.single import agent_status
from harnessdrive.workspace.changes import Changes, FileChange

NOTHING = Changes(base_tree="a", tree="a", files=(), patch=b"")
SOMETHING = Changes(
    base_tree="a",
    tree="b",
    files=(FileChange("x.py", "added", None, "100644", "c", 1, 0, False),),
    patch=b"+x",
)


@pytest.mark.parametrize(
    ("run", "changes", "status"),
    [
        (AgentRun(exit_code=0, timed_out=False, seconds=1), NOTHING, "completed"),
        (AgentRun(exit_code=None, timed_out=True, seconds=1), NOTHING, "timeout"),
        (
            AgentRun(exit_code=-15, timed_out=False, seconds=1, stopped=True),
            SOMETHING,
            "interrupted",
        ),
        (AgentRun(exit_code=1, timed_out=False, seconds=1), NOTHING, "could_not_run"),
        (AgentRun(exit_code=1, timed_out=False, seconds=1), SOMETHING, "crashed"),
        (
            AgentRun(exit_code=0, timed_out=False, seconds=1, could_not_run=True),
            NOTHING,
            "could_not_run",
        ),
        # Stopped by a sandbox limit: it did work, so it is graded and never retried.
        (AgentRun(exit_code=-9, timed_out=False, seconds=1, limit="processes"), NOTHING, "crashed"),
    ],
)
def test_status_rules(run: AgentRun, changes: Changes, status: str) -> None:
    assert agent_status(run, changes) == status
