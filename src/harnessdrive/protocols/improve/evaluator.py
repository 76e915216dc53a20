"""The in-loop evaluator: the agent asks for a measurement; harnessdrive counts and answers.

harnessdrive listens on 127.0.0.1 for the length of the trial. Each round the agent gets a small
client in its private HOME (``.harnessdrive/evaluate.py``, with the address and the trial's
token), the command that runs it in its prompt and in ``HARNESSDRIVE_EVALUATE``, and the address
in ``HARNESSDRIVE_EVALUATOR_URL``; each call snapshots the agent's workspace as a change,
measures it in a measuring copy of its own (the objective's files are injected only there), and
answers with the number only. The budget is counted here, outside the agent's reach: a call over
the round's budget or the trial's ``max_evaluations`` is refused, and every call, value or
refusal, is recorded. A caller without the token (another trial's agent on a shared loopback)
is answered ``refused`` and never counted.

A sandbox with a network of its own (``--network loopback``) relays the loopback ports named by
URLs in the agent's environment (sandbox/relay.py), so the URL variable is what lets a CLI in
bubblewrap reach the evaluator; the scripted agents run in-process and reach it directly.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import secrets
import shlex
import socket
import socketserver
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessdrive.harnesses.base import AgentRequest, AgentRun, Harness, HarnessInfo
from harnessdrive.loopback import LoopbackTCPServer
from harnessdrive.tasks.models import VariantSpec

CLIENT_FOLDER = ".harnessdrive"
CLIENT_NAME = "evaluate.py"
ADDRESS_NAME = "evaluator.json"
URL_VARIABLE = "HARNESSDRIVE_EVALUATOR_URL"
COMMAND_VARIABLE = "HARNESSDRIVE_EVALUATE"
_CLIENT = """import json, pathlib, socket, sys
where = json.loads((pathlib.Path(__file__).parent / "evaluator.json").read_text())
with socket.create_connection((where["host"], where["port"]), timeout=3600) as link:
    link.sendall(("measure " + where["token"] + "\\n").encode())
    answer = link.makefile().readline().strip()
print(answer)
sys.exit(0 if answer and not answer.startswith(("refused", "could not")) else 1)
"""


@dataclass(frozen=True)
class EvaluatorCall:
    round: int
    call: int
    """The call's number within its round."""
    value: float | None
    """None when refused, or when the state could not be measured."""
    refused: str | None = None
    """Why the call was refused (past a budget); None for a call that was measured."""
    error: str | None = None
    """Why a measured call gave no value."""
    machinery: bool = False
    """The call failed in the machinery: it is not counted against the agent's budget."""

    def as_json(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "call": self.call,
            "value": self.value,
            "refused": self.refused,
            "error": self.error,
            "machinery": self.machinery,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EvaluatorCall:
        return cls(
            int(data["round"]),
            int(data["call"]),
            data.get("value"),
            data.get("refused"),
            data.get("error"),
            bool(data.get("machinery", False)),
        )


@dataclass(frozen=True)
class Answer:
    """One measurement of the agent's state: its value, or why there is none."""

    value: float | None
    error: str | None = None
    machinery: bool = False


Measure = Callable[[Path, int, int], Answer]
"""Measure the workspace's state: round N's call K."""


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
        self._token = secrets.token_hex(16)
        evaluator = self

        class Handler(socketserver.StreamRequestHandler):
            timeout = 60  # a caller that never sends its request does not hold a thread

            def handle(self) -> None:
                # A caller that went away or never asked gets nothing.
                with contextlib.suppress(OSError):
                    self._answer()

            def _answer(self) -> None:
                request = self.rfile.readline(128).decode("ascii", "replace").split()
                token = request[1] if len(request) == 2 and request[0] == "measure" else ""
                if not hmac.compare_digest(token.encode(), evaluator._token.encode()):
                    self.wfile.write(b"refused: not this trial's evaluator client\n")
                    return
                self.wfile.write((evaluator.answer() + "\n").encode())

        self._server = LoopbackTCPServer(("127.0.0.1", 0), Handler)
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
        address = {"host": "127.0.0.1", "port": self.port, "token": self._token}
        (folder / ADDRESS_NAME).write_text(json.dumps(address))
        (folder / CLIENT_NAME).write_text(_CLIENT)

    def env(self, home: Path, python: str) -> dict[str, str]:
        """Variables for the agent's run: the URL (which the loopback relay carries into the
        sandbox) and the command that asks for a measurement."""
        return {
            URL_VARIABLE: f"http://127.0.0.1:{self.port}/",
            COMMAND_VARIABLE: client_command(home, python),
        }

    def close_round(self) -> None:
        with self._lock:
            self._workspace = None

    def in_round(self, number: int) -> int:
        """The round's calls the agent is charged for (a machinery failure is not)."""
        return sum(1 for call in self.calls if call.round == number and not call.machinery)

    def measured(self) -> int:
        """Calls that were measured (a value or not): what ``max_evaluations`` counts."""
        return sum(1 for call in self.calls if call.refused is None and not call.machinery)

    def answer(self) -> str:
        # One call at a time: the count is decided before measuring, so a call cut off counts.
        with self._lock:
            number, workspace = self._round, self._workspace
            made = sum(1 for call in self.calls if call.round == number) + 1
            charged = self.in_round(number) + 1
            refused = None
            if workspace is None:
                refused = "no round is under way"
            elif charged > self.budget:
                refused = f"the budget of {self.budget} measurement(s) per round is spent"
            elif self.max_evaluations is not None and self.measured() >= self.max_evaluations:
                refused = f"the trial's {self.max_evaluations} measurement(s) are spent"
            if refused is not None or workspace is None:
                self.calls.append(EvaluatorCall(number, made, None, refused))
                return f"refused: {refused}"
            answer = self.measure(workspace, number, made)
            value = answer.value
            self.calls.append(
                EvaluatorCall(number, made, value, None, answer.error, answer.machinery)
            )
        if value is not None:
            return f"{value:g}"
        if answer.machinery:
            return "could not be measured (the machinery failed; not counted)"
        return f"could not be measured: {answer.error or 'no value'}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def client_command(home: Path, python: str) -> str:
    """The shell command that runs the client: isolated (``-I``), so nothing in the agent's
    environment changes what it does."""
    return f"{shlex.quote(python)} -I {shlex.quote(str(home / CLIENT_FOLDER / CLIENT_NAME))}"


def call_evaluator(home: Path) -> str:
    """What the client prints (for the scripted agents, which call it in-process)."""
    where = json.loads((home / CLIENT_FOLDER / ADDRESS_NAME).read_text())
    with socket.create_connection((where["host"], where["port"]), timeout=600) as link:
        link.sendall(f"measure {where['token']}\n".encode())
        return link.makefile().readline().strip()


class RoundClosing:
    """``harness``, whose run closes the evaluator's round the moment the agent's run ends: a
    process it left behind cannot have a state measured while the round's own grading runs."""

    def __init__(self, harness: Harness, evaluator: Evaluator) -> None:
        self.harness = harness
        self.evaluator = evaluator

    @property
    def name(self) -> str:
        return self.harness.name

    def info(self) -> HarnessInfo:
        return self.harness.info()

    def check_variant(self, variant: VariantSpec) -> None:
        self.harness.check_variant(variant)

    def run(self, request: AgentRequest) -> AgentRun:
        try:
            return self.harness.run(request)
        finally:
            self.evaluator.close_round()
