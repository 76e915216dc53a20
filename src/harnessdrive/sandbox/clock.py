"""A clock for deadlines that keeps counting while the machine sleeps.

``time.monotonic`` stops during suspend on Linux, so a deadline measured with it would let an agent
run for hours of real time after a laptop lid was closed. ``CLOCK_BOOTTIME`` includes suspend.
"""

from __future__ import annotations

import time

_CLOCK = getattr(time, "CLOCK_BOOTTIME", None)


def now() -> float:
    """Seconds on a clock that never goes back and includes time asleep."""
    if _CLOCK is not None:
        return time.clock_gettime(_CLOCK)
    return time.monotonic()
