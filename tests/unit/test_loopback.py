"""Loopback servers: an accept with nothing waiting returns to the loop instead of hanging it."""

from __future__ import annotations

import socket
import socketserver
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

import pytest

from harnessdrive.loopback import LoopbackHTTPServer, LoopbackTCPServer

# A generous bound for work that takes milliseconds: it only keeps a regression from hanging.
BOUND = 60.0


class _Echo(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.wfile.write(b"pong " + self.rfile.readline())


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"pong"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@contextmanager
def serving(server: socketserver.TCPServer) -> Iterator[socketserver.TCPServer]:
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        stopper = threading.Thread(target=server.shutdown, daemon=True)
        stopper.start()
        stopper.join(BOUND)
        assert not stopper.is_alive(), "shutdown() hung"
        server.server_close()


def ask(server: socketserver.TCPServer) -> str:
    port = server.server_address[1]
    if isinstance(server, LoopbackHTTPServer):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=BOUND) as reply:
            return str(reply.read().decode())
    with socket.create_connection(("127.0.0.1", port), timeout=BOUND) as client:
        client.sendall(b"ping\n")
        return client.makefile().readline().strip()


SERVERS = {
    "tcp": lambda: LoopbackTCPServer(("127.0.0.1", 0), _Echo),
    "http": lambda: LoopbackHTTPServer(("127.0.0.1", 0), _Hello),
}


@pytest.mark.parametrize("kind", sorted(SERVERS))
def test_an_accept_with_nothing_waiting_returns_instead_of_blocking(kind: str) -> None:
    server = SERVERS[kind]()
    try:
        with pytest.raises(BlockingIOError):
            server.get_request()
    finally:
        server.server_close()


@pytest.mark.parametrize("kind", sorted(SERVERS))
def test_a_loop_told_to_accept_when_nothing_waits_still_serves_and_stops(kind: str) -> None:
    with serving(SERVERS[kind]()) as server:
        # What a spurious wake-up does: the loop accepts while no connection is waiting.
        # A blocking accept would keep this thread (and shutdown()) waiting for ever.
        spurious = threading.Thread(target=server._handle_request_noblock, daemon=True)
        spurious.start()
        spurious.join(BOUND)
        assert not spurious.is_alive(), "accept() blocked with nothing to accept"
        answer = ask(server)
    assert answer.startswith("pong")
