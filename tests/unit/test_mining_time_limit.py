"""The test time limit derived from HEAD's own time."""

from __future__ import annotations

from harnessdrive.mining.time_limit import TimeLimit


def test_the_limit_follows_heads_time_within_bounds() -> None:
    limit = TimeLimit(None)
    assert (limit.seconds, limit.derived) == (600.0, False)
    limit.derive(5.5)
    assert (limit.seconds, limit.derived) == (60.0, True)
    limit.derive(12.3)
    assert limit.seconds == 123.0
    limit.derive(300)
    assert limit.seconds == 600.0  # never above the default


def test_a_limit_the_user_gave_stays() -> None:
    limit = TimeLimit(15.0)
    limit.derive(100)
    assert (limit.seconds, limit.derived) == (15.0, False)
