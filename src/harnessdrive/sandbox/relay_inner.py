"""Inside a sandbox with its own network: forward 127.0.0.1 ports to the host, then run a command.

Standalone on purpose (run as ``python -I -S relay_inner.py SOCKETS PORTS -- COMMAND...``): it
must start fast and import nothing of ours. Each listed port listens on the sandbox's loopback;
each connection is joined to the Unix socket ``SOCKETS/<port>``, which the driver serves by
connecting to the same port on the host's loopback. Nothing else leaves the sandbox.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def _join(a: socket.socket, b: socket.socket) -> None:
    """Carry bytes both ways until both sides are done, then close both."""
    other = threading.Thread(target=_pump, args=(b, a), daemon=True)
    other.start()
    _pump(a, b)
    other.join()
    a.close()
    b.close()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        threading.Thread(target=_join, args=(client, upstream), daemon=True).start()


def main(argv: list[str]) -> int:
    sockets, ports_text, separator, *command = argv
    if separator != "--" or not command:
        print("usage: relay_inner.py SOCKETS PORTS -- COMMAND...", file=sys.stderr)
        return 2
    listeners = []
    for text in filter(None, ports_text.split(",")):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", int(text)))
        listener.listen(64)
        listeners.append((listener, os.path.join(sockets, text)))
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"{command[0]}: {exc}\n".encode())
            os._exit(127)
    for listener, path in listeners:
        threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
