"""The in-loop evaluator: the agent asks for a measurement; harnessdrive counts and answers.

harnessdrive listens on 127.0.0.1 for the length of each round. The agent gets a small client
in its private HOME (``.harnessdrive/evaluate.py``, with the address) and a line in its prompt;
each call snapshots the agent's workspace as a change, measures it in a measuring copy of its
own (the objective's files are injected only there), and answers with the number only. The
budget is counted here, outside the agent's reach: a call over the round's budget or the
trial's ``max_evaluations`` is refused, and every call, value or refusal, is recorded.

A sandboxed agent reaches the address over the loopback relay only where its harness gives it
loopback networking; the scripted agents run in-process and reach it directly.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLIENT_FOLDER = ".harnessdrive"
CLIENT_NAME = "evaluate.py"
ADDRESS_NAME = "evaluator.json"
_CLIENT = """import json, pathlib, socket, sys
where = json.loads((pathlib.Path(__file__).parent / "evaluator.json").read_text())
with socket.create_connection((where["host"], where["port"]), timeout=3600) as link:
    link.sendall(b"measure\\n")
    answer = link.makefile().readline().strip()
print(answer)
sys.exit(0 if not answer.startswith("refused") else 1)
"""


@dataclass(frozen=True)
class EvaluatorCall:
    round: int
    call: int
    """The call's number within its round."""
    value: float | None
    refused: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "call": self.call,
            "value": self.value,
            "refused": self.refused,
        }


Measure = Callable[[Path, int], float | None]
"""Measure the workspace's state for round N; None when it cannot be measured."""


class Evaluator:
    """One trial's evaluator: a loopback server, its budget and its record of calls."""

    def __init__(self, budget: int, max_evaluations: int | None, measure: Measure) -> None:
        self.budget = budget
        self.max_evaluations = max_evaluations
        self.measure = measure
        self.calls: list[EvaluatorCall] = []
        self._lock = threading.Lock()
        self._round = 0
        self._workspace: Path | None = None
        evaluator = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                self.rfile.readline(64)  # the request's content does not matter
                self.wfile.write((evaluator.answer() + "\n").encode())

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def open_round(self, number: int, workspace: Path, home: Path) -> None:
        """Round ``number`` begins in ``workspace``; its client goes into ``home``."""
        with self._lock:
            self._round, self._workspace = number, workspace
        folder = home / CLIENT_FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ADDRESS_NAME).write_text(json.dumps({"host": "127.0.0.1", "port": self.port}))
        (folder / CLIENT_NAME).write_text(_CLIENT)

    def close_round(self) -> None:
        with self._lock:
            self._workspace = None

    def in_round(self, number: int) -> int:
        return sum(1 for call in self.calls if call.round == number)

    def answer(self) -> str:
        # One call at a time: the count is decided before measuring, so a call cut off counts.
        with self._lock:
            number, workspace = self._round, self._workspace
            made = self.in_round(number) + 1
            refused = None
            if workspace is None:
                refused = "no round is under way"
            elif made > self.budget:
                refused = f"the budget of {self.budget} measurement(s) per round is spent"
            elif self.max_evaluations is not None and len(self.calls) >= self.max_evaluations:
                refused = f"the trial's {self.max_evaluations} measurement(s) are spent"
            if refused is not None or workspace is None:
                self.calls.append(EvaluatorCall(number, made, None, refused))
                return f"refused: {refused}"
            value = self.measure(workspace, number)
            self.calls.append(
                EvaluatorCall(
                    number, made, value, None if value is not None else "could not be measured"
                )
            )
        return "could not be measured" if value is None else f"{value:g}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def client_command(home: Path) -> str:
    return f"python3 {home / CLIENT_FOLDER / CLIENT_NAME}"


def call_evaluator(home: Path) -> str:
    """What the client prints (for the scripted agents, which call it in-process)."""
    where = json.loads((home / CLIENT_FOLDER / ADDRESS_NAME).read_text())
    with socket.create_connection((where["host"], where["port"]), timeout=600) as link:
        link.sendall(b"measure\n")
        return link.makefile().readline().strip()
