"""The forwarding proxy: every wire protocol's usage read on the way, streams passed on as they
come, the provider's refusals recorded by status, TLS to the upstream verified."""

from __future__ import annotations

import http.client
import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.loopback import LoopbackHTTPServer
from harnessdrive.proxy import CALLS_FILE, ModelProxy, ProxiedCall, Traffic
from harnessdrive.testing.model_server import ModelServer, Script, SideReply, Turn
from harnessdrive.testing.model_server import Usage as ScriptUsage
from harnessdrive.transcript.models import Usage

SENT = ScriptUsage(input=10, cache_read=3, output=5, reasoning=2)
MESSAGES = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
GEMINI = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
REQUESTS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    # protocol: (path, plain body, what makes it streamed)
    "anthropic": ("/v1/messages", MESSAGES, {"stream": True}),
    "openai-chat": (
        "/v1/chat/completions",
        CHAT,
        {"stream": True, "stream_options": {"include_usage": True}},
    ),
    "openai-responses": ("/v1/responses", {"model": "m", "input": "hi"}, {"stream": True}),
    "gemini": ("/v1beta/models/m:generateContent", GEMINI, {}),
}


def _script(refusals: tuple[int, ...] = ()) -> Script:
    return Script(turns=(Turn(text="done"),), side_reply=SideReply(usage=SENT), refusals=refusals)


def _post(proxy: ModelProxy, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
    port = int(proxy.origin.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(_script()) as running:
        yield running


@pytest.mark.parametrize("protocol", sorted(REQUESTS))
@pytest.mark.parametrize("streamed", [False, True])
def test_each_protocols_usage_is_read_from_the_answer_as_the_client_sees_it(
    server: ModelServer, protocol: str, streamed: bool
) -> None:
    path, body, stream = REQUESTS[protocol]
    if streamed:
        body = {**body, **stream}
        if protocol == "gemini":
            path = "/v1beta/models/m:streamGenerateContent?alt=sse"
    with ModelProxy(server.base_url) as proxy:
        status, answer = _post(proxy, path, body)
    assert status == 200 and answer
    (call,) = proxy.calls()
    assert (call.status, call.streamed, call.generation, call.model) == (200, streamed, True, "m")
    assert call.usage == Usage(input=10, cache_read=3, output=7, reasoning=2)
    assert server.totals() == ScriptUsage(input=10, cache_read=3, output=5, reasoning=2)
    assert proxy.traffic().usage == call.usage and proxy.traffic().reached_model


def test_refusals_are_recorded_by_status_and_the_query_is_never_kept(tmp_path: Path) -> None:
    with ModelServer(_script(refusals=(401, 429))) as server:
        log = tmp_path / CALLS_FILE
        with ModelProxy(server.base_url, calls_file=log) as proxy:
            path = "/v1beta/models/m:generateContent?key=SECRET-KEY"
            assert _post(proxy, path, GEMINI)[0] == 401
            refused = proxy.traffic()
            assert _post(proxy, path, GEMINI)[0] == 429
            assert _post(proxy, path, GEMINI)[0] == 200
    assert refused.login_refused and not refused.reached_model
    assert "refused the key" in refused.why_not_reached()
    traffic = proxy.traffic()
    assert [c.status for c in proxy.calls()] == [401, 429, 200]
    assert (traffic.answered, traffic.last_status, traffic.reached_model) == (1, 200, True)
    assert traffic.statuses == {"200": 1, "401": 1, "429": 1}
    kept = [ProxiedCall.model_validate_json(line) for line in log.read_text().splitlines()]
    assert kept == list(proxy.calls())
    assert "SECRET-KEY" not in log.read_text()


def test_a_load_refusal_as_the_last_answer_is_what_a_retry_needs(server: ModelServer) -> None:
    server.set_script(_script(refusals=(529,)))
    with ModelProxy(server.base_url) as proxy:
        assert _post(proxy, "/v1/messages", MESSAGES)[0] == 529
    traffic = proxy.traffic()
    assert traffic.refused_for_load and not traffic.reached_model
    assert traffic.why_not_reached().endswith("(529 x1)")


def test_an_unreachable_upstream_is_a_502_with_no_status_recorded() -> None:
    with ModelProxy("http://127.0.0.1:9") as proxy:  # the discard port: nothing listens
        status, _ = _post(proxy, "/v1/messages", MESSAGES)
    assert status == 502
    (call,) = proxy.calls()
    assert call.status is None and call.error is not None
    assert proxy.traffic().why_not_reached().endswith("(none x1)")


class _Trickle(BaseHTTPRequestHandler):
    """Sends one SSE event, then waits for the test's word before the last one."""

    protocol_version = "HTTP/1.1"
    release: threading.Event
    held_back: threading.Event

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        start = {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 4}}}
        self._event(start)
        if not self.release.wait(10):
            self.held_back.set()  # the test never got the first event in time
        self._event({"type": "message_delta", "usage": {"output_tokens": 6}})
        self.wfile.write(b"0\r\n\r\n")

    def _event(self, data: dict[str, Any]) -> None:
        frame = f"data: {json.dumps(data)}\n\n".encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
        self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_stream_is_passed_on_as_it_comes_not_when_it_ends() -> None:
    release, held_back = threading.Event(), threading.Event()
    handler = type("Trickle", (_Trickle,), {"release": release, "held_back": held_back})
    upstream = LoopbackHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=upstream.serve_forever, args=(0.05,), daemon=True).start()
    try:
        with ModelProxy(f"http://127.0.0.1:{upstream.server_address[1]}") as proxy:
            port = int(proxy.origin.rsplit(":", 1)[1])
            client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            client.request("POST", "/v1/messages", body=json.dumps(MESSAGES))
            response = client.getresponse()
            first = response.read1(65536)
            # The upstream is still holding its last event back: this came through unbuffered.
            assert b"message_start" in first and not held_back.is_set()
            release.set()
            rest = response.read()
            client.close()
        assert b"message_delta" in rest
        (call,) = proxy.calls()
        assert call.usage == Usage(input=4, output=6)
    finally:
        upstream.shutdown()
        upstream.server_close()


class _Answer(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps(
            {"type": "message", "model": "m", "usage": {"input_tokens": 2, "output_tokens": 3}}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def tls_upstream(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTPS server on 127.0.0.1 with a self-signed certificate made here."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command to make a certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    server = LoopbackHTTPServer(("127.0.0.1", 0), _Answer)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.socket.setblocking(False)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"https://localhost:{server.server_address[1]}", cert
    finally:
        server.shutdown()
        server.server_close()


def test_tls_to_the_upstream_is_verified_and_forwarded(tls_upstream: tuple[str, Path]) -> None:
    url, cert = tls_upstream
    trusted = ssl.create_default_context(cafile=str(cert))
    with ModelProxy(url, ssl_context=trusted) as proxy:
        status, body = _post(proxy, "/v1/messages", MESSAGES)
    assert status == 200 and b'"input_tokens": 2' in body
    assert proxy.calls()[0].usage == Usage(input=2, output=3)
    # The default context checks the certificate: a self-signed one is refused, never used.
    with ModelProxy(url) as default:
        assert _post(default, "/v1/messages", MESSAGES)[0] == 502
    (refused,) = default.calls()
    assert refused.status is None and "CERTIFICATE_VERIFY_FAILED" in (refused.error or "")


def test_the_client_cannot_choose_where_a_request_goes(server: ModelServer) -> None:
    with ModelProxy(server.base_url) as proxy:
        port = int(proxy.origin.rsplit(":", 1)[1])
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        client.request("GET", "http://elsewhere.invalid/v1/models?x=1")  # absolute form
        assert client.getresponse().status == 200
        client.close()
    (seen,) = server.requests
    assert (seen.path, seen.query) == ("/v1/models", "x=1")
    (call,) = proxy.calls()
    assert (call.path, call.generation) == ("/v1/models", False)
    assert not proxy.traffic().reached_model  # a model list is not a model answering


def _call(status: int | None, usage: Usage | None = None) -> ProxiedCall:
    return ProxiedCall(
        method="POST", path="/v1/messages", generation=True, status=status, started=0, seconds=0
    ).model_copy(update={"usage": usage})


def test_rounds_traffic_is_summed_only_when_every_round_went_through_the_proxy() -> None:
    first = Traffic.of("http://up", (_call(200, Usage(input=3, output=1)), _call(429)))
    second = Traffic.of("http://up", (_call(200, Usage(input=2)), _call(200)))
    both = Traffic.summed([first, second])
    assert both is not None
    assert (both.calls, both.generations, both.answered, both.unmetered) == (4, 4, 3, 1)
    assert both.usage == Usage(input=5, output=1)
    assert both.statuses == {"200": 3, "429": 1}
    assert both.last_status == 200  # the last round's
    assert Traffic.summed([first, None]) is None
    assert Traffic.summed([]) is None
