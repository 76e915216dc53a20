"""Who else hears of each proxied call, as it happens: a worker that relays them to its driver.

A trial on another machine can be lost with its process (a killed node, a full disk); the
calls its proxy saw until then are still owed. An observer registered here hears every call the
proxies of this process record, the moment each is recorded, so the driver can charge a lost
try for what it spent instead of an estimate.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from harnessdrive.proxy.traffic import ProxiedCall

CallObserver = Callable[[ProxiedCall], None]

_LOCK = threading.Lock()
_OBSERVERS: list[CallObserver] = []


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
