"""What the model proxy adds to each model call: time per call and to the first streamed byte.

    python benchmarks/model_proxy.py [--calls 200] [--streamed]

Starts the scripted model server and a model proxy in front of it, then makes ``--calls``
Anthropic Messages requests on one kept-alive connection straight to the server and as many
through the proxy (alternating, so both see the same load), and prints the median and 95th
percentile of each, the proxy's added milliseconds and the ratio. With ``--streamed`` the
requests stream and the time to the first byte of the answer is measured too. Asserts nothing.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import time
from urllib.parse import urlsplit

from harnessdrive.proxy import ModelProxy
from harnessdrive.testing.model_server import ModelServer, Script, SideReply, Turn, Usage


def _connect(url: str) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    connection.connect()
    # As the CLIs' HTTP clients do: without it Nagle's algorithm and delayed ACKs add ~40 ms.
    assert connection.sock is not None
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def _call(connection: http.client.HTTPConnection, body: bytes) -> tuple[float, float]:
    """Seconds to the first byte of the answer and to its end."""
    began = time.perf_counter()
    connection.request("POST", "/v1/messages", body=body, headers={"Content-Type": "json"})
    response = connection.getresponse()
    response.read1(1)
    first = time.perf_counter() - began
    response.read()
    return first, time.perf_counter() - began


def _describe(name: str, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return f"{name}: median {statistics.median(ordered) * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--streamed", action="store_true")
    args = parser.parse_args()
    request = {
        "model": "m",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "x" * 20_000}],
        "stream": args.streamed,
    }
    body = json.dumps(request).encode()
    script = Script(
        turns=(Turn(text="ok"),),
        side_reply=SideReply(text="y" * 2_000, usage=Usage(input=5000, output=500)),
    )
    direct_first: list[float] = []
    direct_total: list[float] = []
    proxied_first: list[float] = []
    proxied_total: list[float] = []
    with ModelServer(script) as server, ModelProxy(server.base_url) as proxy:
        direct, proxied = _connect(server.base_url), _connect(proxy.origin)
        for _ in range(5):  # warm both connections up
            _call(direct, body)
            _call(proxied, body)
        for _ in range(args.calls):
            first, total = _call(direct, body)
            direct_first.append(first)
            direct_total.append(total)
            first, total = _call(proxied, body)
            proxied_first.append(first)
            proxied_total.append(total)
        direct.close()
        proxied.close()
        traffic = proxy.traffic()
    kind = "streamed" if args.streamed else "plain JSON"
    print(f"{args.calls} {kind} calls each way, {len(body):,}-byte requests")
    print(_describe("direct   ", direct_total))
    print(_describe("proxied  ", proxied_total))
    added = statistics.median(proxied_total) - statistics.median(direct_total)
    ratio = statistics.median(proxied_total) / statistics.median(direct_total)
    print(f"added by the proxy: {added * 1000:.2f} ms a call (median), ratio {ratio:.2f}")
    if args.streamed:
        print(_describe("first byte, direct ", direct_first))
        print(_describe("first byte, proxied", proxied_first))
    print(f"the proxy recorded {traffic.calls} calls, {traffic.usage.total:,} tokens")


if __name__ == "__main__":
    main()
