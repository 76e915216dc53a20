"""The forwarding proxy every agent CLI's model traffic goes through.

One proxy per agent run listens on 127.0.0.1 in harnessdrive's own process (a thread per
connection, no process of its own) and forwards each request to one fixed upstream, the
provider or the endpoint the variant names, over TLS when its URL says https. A streamed answer
is passed on piece by piece as it arrives. Every request is recorded with its status, timing and
the usage the answer reported (:mod:`harnessdrive.proxy.usage`), in memory and, a line per call,
in a file the sandbox cannot reach.

The proxy forwards only to its upstream and only what the client sent; it never answers for the
provider, so a status it records is the provider's (or ``None`` when the provider never
answered, and the client gets a 502).
"""

from __future__ import annotations

import contextlib
import http.client
import ssl
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import TracebackType
from typing import IO, Any
from urllib.parse import urlsplit

from harnessdrive.errors import UserError
from harnessdrive.loopback import LoopbackHTTPServer
from harnessdrive.proxy.observers import context_observer, tell
from harnessdrive.proxy.traffic import ProxiedCall, Traffic
from harnessdrive.proxy.usage import UsageReader, wire_of

MAX_REQUEST_BYTES = 64 * 1024 * 1024
"""A request body larger than this is refused with 413 (no CLI sends one)."""
UPSTREAM_TIMEOUT = 600.0
"""Seconds the proxy waits on the upstream for a connection or the next piece of an answer."""
_PIECE = 64 * 1024
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)


class ModelProxy:
    """A forwarding proxy to ``upstream`` on 127.0.0.1; use as a context manager."""

    def __init__(
        self,
        upstream: str,
        *,
        calls_file: Path | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UserError(f"a model proxy needs an http(s) URL to forward to, not {upstream!r}")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise UserError(f"bad port in {upstream!r}") from None
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = port
        self.upstream = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
        # Built once: a default context reads the system's CA store, too slow per connection.
        self._ssl: ssl.SSLContext | None = None
        if parts.scheme == "https":
            self._ssl = ssl_context or ssl.create_default_context()
        self._lock = threading.Lock()
        self._calls: list[ProxiedCall] = []
        self._traffic = Traffic(upstream=self.upstream)
        self._file: IO[str] | None = None
        self._calls_file = calls_file
        self._began = time.monotonic()
        self._server: _QuietServer | None = None
        self._thread: threading.Thread | None = None
        # Whoever follows the trial that starts this proxy hears its calls (protocols/phases.py).
        self._observer = context_observer()

    # Lifetime -------------------------------------------------------------------------

    def start(self) -> ModelProxy:
        handler = type("_BoundHandler", (_Handler,), {"proxy": self})
        server = _QuietServer(("127.0.0.1", 0), handler)
        server.block_on_close = False
        if self._calls_file is not None:
            self._file = self._calls_file.open("a", encoding="utf-8")
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> ModelProxy:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # What callers use -----------------------------------------------------------------

    @property
    def origin(self) -> str:
        assert self._server is not None, "start the proxy first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url_for(self, base_url: str) -> str:
        """``base_url`` (on the upstream) as the client should call it: through the proxy."""
        path = urlsplit(base_url).path.rstrip("/")
        return self.origin + path

    def traffic(self) -> Traffic:
        with self._lock:
            return self._traffic

    def calls(self) -> tuple[ProxiedCall, ...]:
        with self._lock:
            return tuple(self._calls)

    # Used by the handler --------------------------------------------------------------

    def connect(self) -> http.client.HTTPConnection:
        if self._ssl is not None:
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=UPSTREAM_TIMEOUT, context=self._ssl
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=UPSTREAM_TIMEOUT)

    def clock(self) -> float:
        return time.monotonic() - self._began

    def record(self, call: ProxiedCall) -> None:
        with self._lock:
            self._traffic = self._traffic.with_call(call)
            if len(self._calls) < MAX_KEPT_CALLS:
                self._calls.append(call)
            if self._file is not None:
                self._file.write(call.model_dump_json(exclude_none=True) + "\n")
                self._file.flush()
        tell(self._observer, call)


MAX_KEPT_CALLS = 20_000
"""Calls kept one by one; past this only the sums grow (an agent may call without end)."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = UPSTREAM_TIMEOUT  # an idle client connection is dropped after this
    disable_nagle_algorithm = True  # each streamed piece goes out at once
    proxy: ModelProxy
    _upstream: http.client.HTTPConnection | None = None
    _target = "/"

    def do_GET(self) -> None:
        self._forward()

    def do_HEAD(self) -> None:
        self._forward()

    def do_POST(self) -> None:
        self._forward()

    def do_PUT(self) -> None:
        self._forward()

    def do_PATCH(self) -> None:
        self._forward()

    def do_DELETE(self) -> None:
        self._forward()

    def do_OPTIONS(self) -> None:
        self._forward()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the call records are the log."""

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        if self._upstream is not None:
            self._upstream.close()

    def _forward(self) -> None:
        started = self.proxy.clock()
        target = urlsplit(self.path)
        path = target.path or "/"
        # Only the path and query go on: the host is always the upstream's.
        self._target = path + (f"?{target.query}" if target.query else "")
        wire = wire_of(path) if self.command == "POST" else None
        call = {"method": self.command, "path": path[:2000], "generation": wire is not None}
        try:
            body = self._read_body()
        except _TooLarge:
            self._refuse(413, "request body too large")
            self._record(call, started, status=None, error="request body too large")
            return
        except (OSError, ValueError):
            self.close_connection = True
            return
        try:
            response = self._send_upstream(body)
        except (OSError, http.client.HTTPException) as exc:
            self._refuse(502, "the model provider could not be reached")
            self._record(call, started, status=None, error=f"upstream: {exc}"[:300])
            return
        streamed = (response.getheader("Content-Type") or "").startswith("text/event-stream")
        reader = UsageReader(wire, streamed) if wire is not None else None

        def finish(error: str | None) -> None:
            if reader is not None:
                reader.finish()
            self._record(
                call,
                started,
                status=response.status,
                streamed=streamed,
                model=reader.model if reader else None,
                usage=reader.usage if reader and 200 <= response.status < 300 else None,
                error=error,
            )

        self._relay(response, reader, finish)

    def _record(self, call: dict[str, Any], started: float, **fields: Any) -> None:
        seconds = round(self.proxy.clock() - started, 4)
        self.proxy.record(ProxiedCall(**call, started=round(started, 4), seconds=seconds, **fields))

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            total = 0
            while True:
                size = int(self.rfile.readline(100).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                total += size
                if total > MAX_REQUEST_BYTES:
                    raise _TooLarge
                parts.append(self.rfile.read(size))
                self.rfile.readline(100)
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BYTES:
            raise _TooLarge
        return self.rfile.read(length) if length > 0 else b""

    def _send_upstream(self, body: bytes) -> http.client.HTTPResponse:
        named = {
            item.strip().lower() for item in self.headers.get("Connection", "").split(",") if item
        }
        headers = {
            key: value
            for key, value in self.headers.items()
            if key.lower() not in _HOP_BY_HOP and key.lower() not in named
        }
        # The answer is read for its usage on the way: ask for it uncompressed.
        headers = {k: v for k, v in headers.items() if k.lower() != "accept-encoding"}
        headers["Accept-Encoding"] = "identity"
        if body or self.command in ("POST", "PUT", "PATCH"):
            headers["Content-Length"] = str(len(body))
        reused = self._upstream is not None
        for attempt in (1, 2):
            if self._upstream is None:
                self._upstream = self.proxy.connect()
            try:
                self._upstream.request(self.command, self._target, body=body, headers=headers)
                return self._upstream.getresponse()
            except (
                http.client.RemoteDisconnected,
                ConnectionResetError,
                BrokenPipeError,
            ):
                self._upstream.close()
                self._upstream = None
                # A kept-alive connection the upstream closed meanwhile: once more, afresh.
                if not reused or attempt == 2:
                    raise
            except (OSError, http.client.HTTPException):
                self._upstream.close()
                self._upstream = None
                raise
        raise AssertionError("unreachable")

    def _relay(
        self,
        response: http.client.HTTPResponse,
        reader: UsageReader | None,
        finish: Callable[[str | None], None],
    ) -> None:
        """Pass the answer on as it comes. ``finish`` records the call once the whole answer is
        in and before the client can tell it is complete (its last bytes, or the closing chunk):
        whoever reads the traffic after the client has exited finds the call there."""
        self.send_response_only(response.status, response.reason)
        for key, value in response.getheaders():
            if key.lower() not in _HOP_BY_HOP:
                self.send_header(key, value)
        bodiless = self.command == "HEAD" or response.status in (204, 304)
        length = response.getheader("Content-Length")
        sized = length is not None and length.isdigit() and not response.chunked
        if bodiless:
            self.send_header("Content-Length", length if sized and length else "0")
        elif sized:
            self.send_header("Content-Length", str(length))
        else:
            self.send_header("Transfer-Encoding", "chunked")
        error = None
        recorded = False
        try:
            if bodiless:
                finish(None)
                recorded = True
                self.end_headers()
            else:
                self.end_headers()
                remaining = int(length) if sized and length else 0
                while piece := response.read1(_PIECE):
                    if reader is not None:
                        reader.feed(piece)
                    remaining -= len(piece)
                    if sized and remaining <= 0 and not recorded:
                        finish(None)  # the last piece of a sized answer: the client is done
                        recorded = True
                    self._piece(piece, sized)
                if not recorded:
                    finish(None)  # before the last chunk: the client waits for that
                    recorded = True
                if not sized:
                    self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            error = "the client hung up during the answer"
        except (OSError, http.client.HTTPException) as exc:
            error = f"the answer was cut off: {exc}"[:300]
        if not recorded:
            finish(error)
        if error is None:
            response.close()  # read to its end: the connection is free for the next request
        if error is not None or response.will_close:
            self.close_connection = True
            response.close()
            if self._upstream is not None:
                self._upstream.close()
                self._upstream = None

    def _piece(self, piece: bytes, sized: bool) -> None:
        self.wfile.write(piece if sized else b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.flush()

    def _refuse(self, status: int, reason: str) -> None:
        with contextlib.suppress(OSError):
            payload = f'{{"error":{{"type":"proxy_error","message":"{reason}"}}}}'.encode()
            self.send_response_only(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()


class _QuietServer(LoopbackHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up is no news; the call records say what matters."""


class _TooLarge(Exception):
    """A request body over :data:`MAX_REQUEST_BYTES`."""
