"""Threaded servers on 127.0.0.1 whose serving loop cannot hang in accept().

socketserver's loop waits until the listening socket looks readable and then calls a blocking
accept(). When the readiness was spurious, or the waiting connection was gone by the time of the
accept, the loop blocks there until someone else connects, and ``shutdown()`` waits for it
forever: a demo, a trial or a test that stops its server hangs. These servers accept on a
non-blocking socket, so an accept with nothing to take returns to the loop (socketserver ignores
the error), and give each accepted connection back its blocking mode for the handler.
"""

from __future__ import annotations

import socket
import socketserver
from http.server import ThreadingHTTPServer
from typing import Any


class _AcceptWithoutBlocking(socketserver.TCPServer):
    daemon_threads = True

    def server_activate(self) -> None:
        super().server_activate()
        self.socket.setblocking(False)

    def get_request(self) -> tuple[socket.socket, Any]:
        request, address = self.socket.accept()
        # Linux gives an accepted socket blocking mode anyway; other systems copy the listener's.
        request.setblocking(True)
        return request, address


class LoopbackTCPServer(_AcceptWithoutBlocking, socketserver.ThreadingTCPServer):
    """A ThreadingTCPServer, one daemon thread per connection."""


class LoopbackHTTPServer(_AcceptWithoutBlocking, ThreadingHTTPServer):
    """A ThreadingHTTPServer, one daemon thread per connection."""
