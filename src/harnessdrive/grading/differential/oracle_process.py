"""The oracle served to the agent's run, answering in a process of its own, with limits.

The agent chooses every case it sends, so the oracle that answers them must not run in the
driver: a case that makes it allocate without end, loop, or fill an unbounded cache would take
the driver down with it. Here it runs in a child process (its own session, the allowlisted
environment, the task folder as its directory) with a memory limit, a time limit per answer and
a cache bounded in bytes. A case that breaks any of them is answered as a bad request and the
process is started again for the next one; nothing of it reaches the operator's console.

Under the run's bubblewrap sandbox the child also runs sandboxed: the system read-only, the
task folder and the interpreter with our package read-only, a private /tmp as HOME and TMPDIR,
no network, and none of the run's hidden paths (the results folder, the agent's workspace, the
real HOME). The process is started and spoken to from one thread of its own, which lives as
long as the oracle: bubblewrap ends its sandbox when the thread that started it ends.

Run as a module it is that child: one JSON line per case on stdin, one JSON line per answer on
stdout (``{"answer": ...}``, or ``{"refused": true}`` when the oracle cannot answer the case).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import harnessdrive
from harnessdrive.grading.differential.spec import OracleSpec
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.runner import Isolation, Sandbox, piped_argv

MEMORY_MB = 1024
"""The child's address-space limit."""
CACHE_BYTES = 64 * 1024 * 1024
"""JSON bytes of cases and answers the child keeps cached; the oldest go first."""
MAX_REPLY_BYTES = 16 * 1024 * 1024
"""An answer line longer than this is refused (the case asked for too much)."""
START_SECONDS = 60.0
"""How long the child may take to start and load the oracle before it says it is ready."""
READY = b"ready\n"
_READ = 256 * 1024


class OracleRefused(Exception):
    """The oracle could not answer this case: a bad request, whatever the reason."""


class OracleProcess:
    """Answers cases like :class:`~harnessdrive.grading.differential.oracle.Oracle`, from a
    child process with limits; started on the first case and again after any failure."""

    def __init__(
        self,
        folder: Path,
        spec: OracleSpec,
        *,
        python: str = sys.executable,
        memory_mb: int = MEMORY_MB,
        cache_bytes: int = CACHE_BYTES,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.folder = folder
        self.spec = spec
        self.python = python
        self.memory_mb = memory_mb
        self.cache_bytes = cache_bytes
        self.sandbox = sandbox
        """The run's sandbox; None or ``none``: a plain process with the limits alone."""
        self.timeout = spec.answer_timeout
        self.starts = 0
        """How many times the child was started (a failure ends one)."""
        self._process: subprocess.Popen[bytes] | None = None
        self._scratch = Path(tempfile.mkdtemp(prefix="harnessdrive-oracle-"))
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="oracle")

    def answer(self, case: Any) -> Any:
        """The oracle's answer to ``case`` (every rule on), or :class:`OracleRefused`."""
        return self._thread.submit(self._answer, case).result()

    def _answer(self, case: Any) -> Any:
        process = self._running()
        assert process.stdin is not None
        try:
            process.stdin.write(json.dumps({"case": case}).encode() + b"\n")
            process.stdin.flush()
            line = self._line(process, now() + self.timeout)
            reply = json.loads(line)
        except (OSError, ValueError, OracleRefused):
            self._end()
            raise OracleRefused from None
        if not isinstance(reply, dict) or "answer" not in reply:
            raise OracleRefused
        return reply["answer"]

    def close(self) -> None:
        self._thread.submit(self._end).result()
        self._thread.shutdown()
        with contextlib.suppress(OSError):
            for leftover in self._scratch.iterdir():
                leftover.unlink()
            self._scratch.rmdir()

    def _running(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._end()
        limit = self.memory_mb * 1024 * 1024

        def limits() -> None:  # in the child, before it runs anything
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        argv = [self.python, "-I", "-m", __name__, str(self.folder), str(self.cache_bytes)]
        if self.sandbox is not None and self.sandbox.name == "bwrap":
            private = Path("/tmp")  # the sandbox's own tmpfs
            env = base_environment(private, private)
            argv = piped_argv(
                self.sandbox,
                argv,
                cwd=self.folder,
                env=env,
                isolation=Isolation(readonly=(self.folder,), tools=_interpreter_folders()),
            )
        else:
            env = base_environment(self._scratch, self._scratch)
        self._process = subprocess.Popen(
            argv,
            cwd=self.folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # the oracle's tracebacks are nobody's business
            start_new_session=True,
            preexec_fn=limits,  # no threads of ours run in between
        )
        self.starts += 1
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(self.spec.model_dump_json().encode() + b"\n")
            self._process.stdin.flush()
            # Its start (an interpreter, the oracle's module) is not counted against a case.
            ready = self._line(self._process, now() + START_SECONDS)
        except (OSError, OracleRefused):
            self._end()
            raise OracleRefused from None
        if ready != READY:
            self._end()
            raise OracleRefused
        return self._process

    def _line(self, process: subprocess.Popen[bytes], deadline: float) -> bytes:
        """One line of the child's output, by ``deadline`` and within the size bound."""
        assert process.stdout is not None
        fd = process.stdout.fileno()
        got = bytearray()
        while not got.endswith(b"\n"):
            left = deadline - now()
            if left <= 0 or len(got) > MAX_REPLY_BYTES:
                raise OracleRefused
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, _READ)
            if not chunk:
                raise OracleRefused  # it died: out of memory, or the oracle exited
            got += chunk
        return bytes(got)

    def _end(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _interpreter_folders() -> tuple[Path, ...]:
    """What the child needs to start: the interpreter, its environment and our package."""
    package = Path(harnessdrive.__file__).resolve().parent
    return (Path(sys.prefix), Path(sys.base_prefix), package)


def main(argv: list[str]) -> int:
    """The child: answer each case line until stdin ends."""
    from harnessdrive.errors import GradingError
    from harnessdrive.grading.differential.loading import task_callable
    from harnessdrive.grading.differential.oracle import Oracle

    folder, cache_bytes = Path(argv[0]), int(argv[1])
    spec = OracleSpec.model_validate_json(sys.stdin.buffer.readline())
    oracle = Oracle(folder, spec, cache_bytes=cache_bytes)
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # what the oracle prints never mixes with the answers
    if spec.function is not None:
        task_callable(folder, spec.function, "oracle")  # loaded before the first case's clock
    out.write(READY)
    out.flush()
    for line in sys.stdin.buffer:
        try:
            reply = {"answer": oracle.answer(json.loads(line)["case"])}
            text = json.dumps(reply)
        except (GradingError, ValueError, KeyError, TypeError, RecursionError) as error:
            if isinstance(error.__cause__, MemoryError):
                return 1  # its heap is spent: a fresh process answers the next case
            text = json.dumps({"refused": True})
        out.write(text.encode() + b"\n")
        out.flush()
    oracle.close()  # a long-lived oracle command of the task's ends with this process
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
