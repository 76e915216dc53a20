"""Ray's own messages to the driver go to the run's log, not to the terminal.

Ray prints what its raylets publish ("(raylet) A worker died or was killed ...") on the
driver's standard output, whatever ``log_to_driver`` says: in the middle of the progress lines,
and into the output of ``--json``. The driver's Ray module prints them through one function,
which is pointed here at a file while a run is on; without a file they print as Ray would.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_RAY_WORKER = "ray._private.worker"
_PRINTER = "print_to_stdstream"

_lock = threading.Lock()
_target: Path | None = None
_ray_printer: Callable[..., Any] | None = None


def send_ray_messages_to(log: Path) -> None:
    """Write Ray's messages to the driver into ``log`` from now on (until another run's)."""
    global _target, _ray_printer
    module = sys.modules.get(_RAY_WORKER)
    printer = getattr(module, _PRINTER, None)
    if module is None or not callable(printer):
        return  # a Ray that prints another way keeps its own
    with _lock:
        if _ray_printer is None:
            _ray_printer = printer
            setattr(module, _PRINTER, _to_log)
        _target = log


def _to_log(data: dict[str, Any], ignore_prefix: bool = False) -> None:
    target = _target
    lines = data.get("lines") or []
    if target is not None:
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        source = str(data.get("pid", "ray"))
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "a", encoding="utf-8", errors="replace") as log:
                for line in lines:
                    log.write(f"{stamp} ({source}) {line}\n")
            return
        except OSError:
            pass  # an unwritable log: the terminal, as Ray would
    if _ray_printer is not None:
        _ray_printer(data, ignore_prefix)
