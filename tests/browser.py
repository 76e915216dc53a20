"""A real headless Chromium, driven over the DevTools protocol on a pipe with the stdlib.

One browser per test session; each :meth:`Chromium.visit` opens a page in a fresh tab and
collects everything the page logged (console calls, uncaught exceptions, the browser's own log:
blocked requests, CSP violations, failed loads) until its load event, then answers
``evaluate`` and ``screenshot`` calls.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
TIMEOUT = 60.0


def find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Visit:
    browser: Chromium
    session: str
    messages: list[str] = field(default_factory=list)
    """Every console message, exception and browser log entry, as ``level: text``."""

    def evaluate(self, expression: str) -> Any:
        reply = self.browser.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True},
            session=self.session,
        )
        if "exceptionDetails" in reply:
            raise AssertionError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(self, path: Path) -> None:
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        self.browser.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": min(height, 4000), "deviceScaleFactor": 1, "mobile": False},
            session=self.session,
        )
        shot = self.browser.call("Page.captureScreenshot", {"format": "png"}, session=self.session)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))


class Chromium:
    def __init__(self, binary: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="hd-chromium-")
        to_browser_read, self._write = os.pipe()
        self._read, from_browser_write = os.pipe()

        def wire() -> None:  # in the child: the protocol's pipes are fds 3 and 4
            # Moved out of the way first, so that neither lands on the other's target.
            high_read = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD, 10)
            high_write = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD, 10)
            os.dup2(high_read, 3)
            os.dup2(high_write, 4)

        self.process = subprocess.Popen(
            [
                binary,
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire,
            close_fds=False,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next = 0
        self._events: list[dict[str, Any]] = []

    def _send(self, message: dict[str, Any]) -> None:
        os.write(self._write, json.dumps(message).encode() + b"\0")

    def _receive(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise AssertionError("chromium closed its DevTools pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)  # type: ignore[no-any-return]

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None
    ) -> Any:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._send(message)
        while True:
            reply = self._receive()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def visit(self, url: str) -> Visit:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        visit = Visit(self, session)
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=session)
        self._events.clear()
        self.call("Page.navigate", {"url": url}, session=session)
        while not any(
            e.get("method") == "Page.loadEventFired" and e.get("sessionId") == session
            for e in self._events
        ):
            self._events.append(self._receive())
        # What the page logged during the load, and anything its script logs at once after.
        self.call("Runtime.evaluate", {"expression": "1"}, session=session)
        visit.messages.extend(_message(e) for e in self._events if _is_message(e, session))
        return visit

    def close(self) -> None:
        try:
            self._send({"id": 0, "method": "Browser.close"})
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        os.close(self._write)
        os.close(self._read)
        shutil.rmtree(self.profile, ignore_errors=True)


_MESSAGES = ("Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded")


def _is_message(event: dict[str, Any], session: str) -> bool:
    return event.get("sessionId") == session and event.get("method") in _MESSAGES


def _message(event: dict[str, Any]) -> str:
    params = event.get("params", {})
    if event["method"] == "Runtime.consoleAPICalled":
        args = " ".join(
            str(a.get("value", a.get("description", ""))) for a in params.get("args", [])
        )
        return f"console.{params.get('type')}: {args}"
    if event["method"] == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        return (
            f"exception: {details.get('exception', {}).get('description') or details.get('text')}"
        )
    entry = params.get("entry", {})
    where = entry.get("url", "")
    return f"log.{entry.get('level')} ({entry.get('source')}): {entry.get('text')} {where}"
