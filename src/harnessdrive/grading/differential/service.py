"""The oracle as a loopback server for the agent's run, stopped before grading.

A differential task whose oracle says ``serve = true`` gets one HTTP server on 127.0.0.1 per
trial: ``POST`` a case as JSON, get the oracle's answer as JSON (every rule on). Bodies are
limited in size and nesting and every error is a plain ``400``/``500`` with no detail, so
probing it tells the agent nothing about the host; the oracle answers from a process of its own
with memory, time and cache limits (oracle_process.py), so no case can take the driver down.
The server stops when the agent's run ends, so an untouched starter that calls it can never
score in grading, where nothing listens and the sandbox has no network.

The agent learns the address from ``HARNESSDRIVE_ORACLE_URL``; a sandbox in ``loopback`` mode
lets it through because the value names a loopback port.

The differential kind serves it from its hook around the agent's run
(:meth:`DifferentialKind.around_agent_run`, through grading/run_watch.py); the
:class:`AgentRunWatch` also tells whether the oracle server died during the run: such a trial
is recorded invalid.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

from harnessdrive.errors import AgentDataError, GradingError
from harnessdrive.grading.differential.oracle_process import OracleProcess, OracleRefused
from harnessdrive.grading.differential.spec import DifferentialGradeSpec
from harnessdrive.grading.differential.task_server import TaskServer, start_task_server
from harnessdrive.grading.hostile import load_json
from harnessdrive.grading.kinds.base import RunWatch
from harnessdrive.grading.run_watch import clocked
from harnessdrive.loopback import LoopbackHTTPServer
from harnessdrive.sandbox.runner import Sandbox
from harnessdrive.tasks.loading import Task

URL_VARIABLE = "HARNESSDRIVE_ORACLE_URL"
MAX_BODY = 1024 * 1024


@dataclass
class AgentRunWatch(RunWatch):
    """What the agent's run is given (``env``) and what disturbed it (``problem``), with the
    oracle server's own state."""

    served: int = 0
    server: LoopbackHTTPServer | None = None
    thread: threading.Thread | None = None
    """The server's thread; it ends before the run does only when the server died."""


def agent_run_watch(
    task: Task, sandbox: Sandbox | None = None
) -> contextlib.AbstractContextManager[AgentRunWatch]:
    """Around an agent's run of ``task``: the oracle service, and the clocks, as every round
    of a differential task has them."""
    return clocked(oracle_service(task, sandbox))


@contextmanager
def oracle_service(task: Task, sandbox: Sandbox | None = None) -> Iterator[AgentRunWatch]:
    """Around the agent's run: the oracle server when the task has one. The served oracle's
    process runs under ``sandbox``, the run's (oracle_process.py)."""
    watch = AgentRunWatch()
    spec = task.spec.grade
    server: LoopbackHTTPServer | None = None
    thread: threading.Thread | None = None
    own: TaskServer | None = None
    answering: OracleProcess | None = None
    if isinstance(spec, DifferentialGradeSpec) and spec.oracle.server is not None:
        own = start_task_server(task.folder, spec.oracle)
        watch.env[URL_VARIABLE] = own.url
        watch.problem = own.problem  # a server that never served makes the trial invalid
    elif isinstance(spec, DifferentialGradeSpec) and spec.oracle.serve:
        answering = OracleProcess(task.folder, spec.oracle, sandbox=sandbox)
        server = oracle_server(answering, watch)
        thread = threading.Thread(target=server.serve_forever, name="oracle", daemon=True)
        thread.start()
        watch.server, watch.thread = server, thread
        watch.env[URL_VARIABLE] = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        yield watch
    finally:
        if own is not None and not own.stop() and watch.problem is None:
            watch.problem = "the oracle server died during the agent's run"
        if server is not None and thread is not None:
            died = not thread.is_alive()
            server.shutdown()
            server.server_close()
            thread.join()
            if answering is not None:
                answering.close()
            if died:
                watch.problem = "the oracle server died during the agent's run"


class Answers(Protocol):
    def answer(self, case: Any) -> Any: ...


def oracle_server(oracle: Answers, watch: AgentRunWatch) -> LoopbackHTTPServer:
    """A server (not yet serving) on a free loopback port that answers with ``oracle``.

    A request over :data:`MAX_BODY` bytes or nested past the bound, one the oracle cannot
    answer (a bad case, a limit of its process), and anything else that goes wrong get a bare
    ``400``/``500``: nothing of it is told to the agent or printed on the operator's console."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            try:
                self._answer()
            except Exception:  # never a traceback on the console, never detail to the agent
                with contextlib.suppress(Exception):
                    self._reply(500, {"error": "internal error"})

        def _answer(self) -> None:
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 < length <= MAX_BODY:
                self._reply(400, {"error": "bad request"})
                return
            try:
                case: Any = load_json(self.rfile.read(length), "a request", max_bytes=MAX_BODY)
            except AgentDataError:
                self._reply(400, {"error": "bad request"})
                return
            try:
                with lock:
                    answer = oracle.answer(case)
                    watch.served += 1
            except (GradingError, OracleRefused):
                # Probing with malformed cases is the agent's right; it never makes a run invalid.
                self._reply(400, {"error": "bad request"})
                return
            self._reply(200, answer)

        def _reply(self, status: int, value: Any) -> None:
            body = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return  # nothing of a request goes to our output

    return _QuietServer(("127.0.0.1", 0), Handler)


class _QuietServer(LoopbackHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a connection the agent broke is no news for the operator's console
