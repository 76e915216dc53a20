"""What a running trial is doing, told while it runs: its phase, its model calls, its spend.

The trial core says when a trial sets up, when its agent starts, when it is graded and when it
records its files (:func:`phase`); the model proxies the agent's run starts count its calls
and price them. A :class:`PhaseReporter` turns that into :class:`TrialPhase` events for the
job's ``on_phase``: each change of phase at once, the running counts at most once every
:data:`THROTTLE_SECONDS` (and the latest always, a moment later), so a chatty agent costs a
few events a second at most. The events are ephemeral: the driver shows them and keeps none.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import date
from typing import Literal

from harnessdrive.accounting.trial_cost import Costing
from harnessdrive.proxy.observers import observing_this_context
from harnessdrive.proxy.traffic import ProxiedCall
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript import ModelCall

Phase = Literal["starting", "setup", "agent", "grading", "recording"]
"""``starting``: handed to the executor, nothing heard yet; the others as the core says."""
PHASES: tuple[Phase, ...] = ("agent", "grading", "setup", "recording", "starting")
"""In the order a summary lists them."""
THROTTLE_SECONDS = 1.0
"""At most one event per trial this often for its counts (a change of phase goes at once)."""


@dataclass(frozen=True)
class TrialPhase:
    """One running trial's state, as its worker last told it."""

    phase: Phase
    calls: int = 0
    """Model calls (its turns) its proxies saw so far, in every round."""
    usd: float = 0.0
    """What those calls cost at the run's prices (0 where nothing is priced)."""

    def describe(self) -> str:
        """``agent, turn 4, $0.0120``, in a few words."""
        words: list[str] = [self.phase]
        if self.calls:
            words.append(f"turn {self.calls}")
        if self.usd:
            words.append(f"${self.usd:.4f}")
        return ", ".join(words)


PhaseListener = Callable[[TrialPhase], None]
CallPrice = Callable[[ProxiedCall], float]


def call_price(costing: Costing, variant: VariantSpec, started: str) -> CallPrice:
    """What one proxied call costs at the run's prices on the trial's day (0 when unpriced)."""
    on = date.fromisoformat(started[:10])

    def price(call: ProxiedCall) -> float:
        model = call.model or variant.model
        if call.usage is None or not model:
            return 0.0
        return costing.book.price([ModelCall(model=model, usage=call.usage)], on=on).priced_usd

    return price


class PhaseReporter:
    """Tells ``listener`` a trial's phases and counts, throttled (one per trial)."""

    def __init__(
        self,
        listener: PhaseListener,
        price: CallPrice | None = None,
        *,
        interval: float = THROTTLE_SECONDS,
    ) -> None:
        self._listener = listener
        self._price = price
        self._interval = interval
        # One lock for the state and the telling: events leave in the order they were made.
        self._lock = threading.Lock()
        self._state = TrialPhase("starting")
        self._told_at = float("-inf")
        self._timer: threading.Timer | None = None
        self._closed = False

    @property
    def state(self) -> TrialPhase:
        return self._state

    def enter(self, phase: Phase) -> None:
        """The trial is now in ``phase``: told at once."""
        with self._lock:
            if self._closed or self._state.phase == phase:
                return
            self._state = replace(self._state, phase=phase)
            self._tell()

    def call(self, call: ProxiedCall) -> None:
        """A proxy of this trial recorded ``call`` (from the proxy's thread)."""
        if not call.generation:
            return
        usd = 0.0
        if self._price is not None:
            with contextlib.suppress(Exception):  # a price we cannot tell is shown as none
                usd = self._price(call)
        with self._lock:
            if self._closed:
                return
            self._state = replace(
                self._state, calls=self._state.calls + 1, usd=round(self._state.usd + usd, 6)
            )
            wait = self._told_at + self._interval - time.monotonic()
            if wait <= 0:
                self._tell()
            elif self._timer is None:  # the latest counts go out once the interval is over
                self._timer = threading.Timer(wait, self._flush)
                self._timer.daemon = True
                self._timer.start()

    def close(self) -> None:
        """The trial is over: nothing more is told."""
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            if not self._closed:
                self._tell()

    def _tell(self) -> None:
        """Tell the listener the current state (the lock held)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._told_at = time.monotonic()
        with contextlib.suppress(Exception):  # whoever listens never fails the trial
            self._listener(self._state)


_CURRENT: ContextVar[PhaseReporter | None] = ContextVar("harnessdrive_trial_phase", default=None)


@contextlib.contextmanager
def reporting(reporter: PhaseReporter | None) -> Iterator[None]:
    """While inside, :func:`phase` and the model proxies started in this context tell
    ``reporter`` (nothing is told with None)."""
    if reporter is None:
        yield
        return
    token = _CURRENT.set(reporter)
    try:
        with observing_this_context(reporter.call):
            yield
    finally:
        _CURRENT.reset(token)
        reporter.close()


def phase(name: Phase) -> None:
    """The trial running in this context is now in ``name`` (nothing when none reports)."""
    reporter = _CURRENT.get()
    if reporter is not None:
        reporter.enter(name)
