"""Who else hears of each proxied call, as it happens: a worker that relays them to its driver.

A trial on another machine can be lost with its process (a killed node, a full disk); the
calls its proxy saw until then are still owed. An observer registered here hears every call the
proxies of this process record, the moment each is recorded, so the driver can charge a lost
try for what it spent instead of an estimate.

An observer can also be bound to a context (:func:`observing_this_context`): a proxy started in
that context, say a trial's thread, tells it the calls of that proxy only, so trials that
share a process each hear their own.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from harnessdrive.proxy.traffic import ProxiedCall

CallObserver = Callable[[ProxiedCall], None]

_LOCK = threading.Lock()
_OBSERVERS: list[CallObserver] = []
_BOUND: ContextVar[CallObserver | None] = ContextVar("harnessdrive_call_observer", default=None)


@contextlib.contextmanager
def observing_calls(observer: CallObserver) -> Iterator[None]:
    """While inside, ``observer`` hears every call a proxy of this process records."""
    with _LOCK:
        _OBSERVERS.append(observer)
    try:
        yield
    finally:
        with _LOCK:
            _OBSERVERS.remove(observer)


def tell_observers(call: ProxiedCall) -> None:
    """Pass ``call`` on; an observer's failure never reaches the proxy's client."""
    with _LOCK:
        observers = list(_OBSERVERS)
    for observer in observers:
        with contextlib.suppress(Exception):
            observer(call)


@contextlib.contextmanager
def observing_this_context(observer: CallObserver) -> Iterator[None]:
    """While inside, a proxy started in this context (and the contexts it spawns) tells
    ``observer`` each call it records, besides the observers of the whole process."""
    token = _BOUND.set(observer)
    try:
        yield
    finally:
        _BOUND.reset(token)


def context_observer() -> CallObserver | None:
    """The observer bound to the calling context, for a proxy starting there."""
    return _BOUND.get()


def tell(observer: CallObserver | None, call: ProxiedCall) -> None:
    """Pass ``call`` to ``observer`` (a proxy's own) and to the process's observers."""
    if observer is not None:
        with contextlib.suppress(Exception):
            observer(call)
    tell_observers(call)
