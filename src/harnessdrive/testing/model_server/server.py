"""The HTTP side: a threaded HTTP server on 127.0.0.1 and the ModelServer that owns it."""

from __future__ import annotations

import gzip
import json
import threading
import traceback
import zlib
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from harnessdrive.loopback import LoopbackHTTPServer
from harnessdrive.proxy.usage import wire_of
from harnessdrive.testing.model_server.player import TextEdits
from harnessdrive.testing.model_server.recording import RecordedRequest, RequestLog
from harnessdrive.testing.model_server.routes import (
    Answer,
    Incoming,
    Mount,
    answer,
    error_record,
    refusal_body,
    refused_record,
    sse_frame,
)
from harnessdrive.testing.model_server.script import Script, Usage

DEFAULT_MODELS = ("harnessdrive-mock",)
_MOUNT_PREFIX = "/s/"


@dataclass(frozen=True)
class Endpoints:
    """Base URLs of one mounted script, in the form each client wants them."""

    root: str

    @property
    def anthropic(self) -> str:
        """For ANTHROPIC_BASE_URL: no /v1 (the SDK adds it)."""
        return self.root

    @property
    def openai(self) -> str:
        """For OpenAI-style base URLs (Codex, opencode, pi, qwen, aider, mini): ends in /v1."""
        return f"{self.root}/v1"

    @property
    def gemini(self) -> str:
        """For GOOGLE_GEMINI_BASE_URL: the root (the SDK adds /v1beta)."""
        return self.root


class ModelServer:
    """A scripted model on 127.0.0.1 speaking the Anthropic, OpenAI and Gemini APIs.

    `ModelServer(script)` serves `script` at the root; `mount(name, script)` serves another
    one under `/s/<name>`, so concurrent clients can each follow their own script.

    `workdir` is the client's working directory, used to make scripted paths absolute and to
    read files for edits; without it the server looks for the directory the client names in
    its prompt (all CLIs but aider do). `text_edits` forces or disables aider-style edits in
    the answer text ("auto" detects them). A request whose model id contains one of
    `side_models` (say "haiku") is a side request even when it offers tools.
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        workdir: str | Path | None = None,
        text_edits: TextEdits = "auto",
        side_models: tuple[str, ...] = (),
        models: tuple[str, ...] = DEFAULT_MODELS,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self._lock = threading.Lock()
        self._side_models = side_models
        self._mounts: dict[str, Mount] = {
            "": Mount(script, _path(workdir), text_edits, side_models)
        }
        self._models = models
        self._refused: dict[str, int] = {}
        self._address = (host, port)
        self._http: LoopbackHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.log = RequestLog()

    # Lifecycle -------------------------------------------------------------------------

    def start(self) -> ModelServer:
        if self._http is not None:
            return self
        handler = type("BoundHandler", (_Handler,), {"model_server": self})
        self._http = LoopbackHTTPServer(self._address, handler)
        # A short poll keeps stop() quick; serve_forever checks for shutdown at this pace.
        self._thread = threading.Thread(
            target=self._http.serve_forever, args=(0.05,), name="model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._http is None:
            return
        self._http.shutdown()
        self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._http = None
        self._thread = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # Addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._http is None:
            raise RuntimeError("the model server is not started")
        return int(self._http.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def endpoints(self) -> Endpoints:
        return Endpoints(self.base_url)

    # Scripts -----------------------------------------------------------------------------

    def mount(
        self,
        name: str,
        script: Script,
        *,
        workdir: str | Path | None = None,
        text_edits: TextEdits = "auto",
    ) -> Endpoints:
        """Serve `script` under `/s/<name>`; returns the base URLs to give that client."""
        if not name or "/" in name:
            raise ValueError(f"mount name {name!r} must be non-empty and without '/'")
        with self._lock:
            self._mounts[name] = Mount(script, _path(workdir), text_edits, self._side_models)
        return Endpoints(f"{self.base_url}{_MOUNT_PREFIX}{name}")

    def set_script(
        self,
        script: Script,
        *,
        workdir: str | Path | None = None,
        text_edits: TextEdits = "auto",
    ) -> None:
        """Replace the script served at the root (between runs)."""
        with self._lock:
            self._mounts[""] = Mount(script, _path(workdir), text_edits, self._side_models)

    # What happened -----------------------------------------------------------------------

    @property
    def requests(self) -> tuple[RecordedRequest, ...]:
        return self.log.all()

    def turns(self, mount: str = "") -> tuple[RecordedRequest, ...]:
        """Requests that consumed a scripted turn, in arrival order."""
        return tuple(r for r in self.log.all() if r.kind == "turn" and r.mount == mount)

    def totals(self, protocol: str | None = None, mount: str | None = None) -> Usage:
        """Usage sent so far as clients see it (see `seen_usage`), per protocol or overall."""
        return self.log.totals(protocol, mount)

    # Used by the handler -----------------------------------------------------------------

    def _refusal(self, mount_name: str, mount: Mount, incoming: Incoming) -> int | None:
        """The status to refuse this request with, while the script has refusals left."""
        if mount.script is None or incoming.method != "POST" or wire_of(incoming.path) is None:
            return None
        with self._lock:
            sent = self._refused.get(mount_name, 0)
            if sent >= len(mount.script.refusals):
                return None
            self._refused[mount_name] = sent + 1
            return mount.script.refusals[sent]

    def _resolve(self, path: str) -> tuple[str, str, Mount]:
        with self._lock:
            if path.startswith(_MOUNT_PREFIX):
                name, _, rest = path[len(_MOUNT_PREFIX) :].partition("/")
                if name in self._mounts:
                    return name, "/" + rest, self._mounts[name]
            return "", path, self._mounts[""]


def _path(workdir: str | Path | None) -> Path | None:
    return Path(workdir).resolve() if workdir is not None else None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "harnessdrive-model-server"
    # Idle keep-alive connections are dropped after this many seconds.
    timeout = 60
    # Headers and body are separate writes: without this each answer waits ~40 ms for an ACK.
    disable_nagle_algorithm = True
    model_server: ModelServer

    def do_HEAD(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def do_OPTIONS(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is the record."""

    def _serve(self) -> None:
        url = urlsplit(self.path)
        mount_name, path, mount = self.model_server._resolve(url.path)
        headers = {key.lower(): value for key, value in self.headers.items()}
        incoming = Incoming(self.command, path, url.query, headers, None, mount_name)
        try:
            incoming = Incoming(
                self.command,
                path,
                url.query,
                headers,
                _decode(self._read_body(), headers),
                mount_name,
            )
            refusal = self.model_server._refusal(mount_name, mount, incoming)
            if refusal is not None:
                self.model_server.log.append(refused_record(incoming, refusal))
                self._send_json(refusal, refusal_body(refusal))
                return
            reply = answer(incoming, mount, self.model_server._models)
        except Exception as error:  # any failure becomes a clean 500, never a dropped socket
            message = f"{type(error).__name__}: {error}"
            detail = traceback.format_exc()
            self.model_server.log.append(error_record(incoming, message, detail))
            self._send_json(500, {"error": {"type": "server_error", "message": message}})
            return
        self.model_server.log.append(reply.record)
        try:
            self._send(reply)
        except (BrokenPipeError, ConnectionResetError):
            # The client hung up mid-answer; the request is recorded, nothing more to do.
            self.close_connection = True

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, reply: Answer) -> None:
        if reply.stream:
            self.send_response(reply.status)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event, data in reply.events:
                frame = sse_frame(event, data)
                self.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return
        if reply.status == 204 or self.command == "HEAD":
            self.send_response(reply.status)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._send_json(reply.status, reply.json_body)

    def _send_json(self, status: int, body: Any) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()


def _decode(raw: bytes, headers: dict[str, str]) -> Any:
    encoding = headers.get("content-encoding", "").lower()
    if encoding == "gzip":
        raw = gzip.decompress(raw)
    elif encoding == "deflate":
        raw = zlib.decompress(raw)
    elif encoding and encoding != "identity":
        raise ValueError(f"unsupported request Content-Encoding {encoding!r}")
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", errors="replace")
