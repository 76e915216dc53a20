"""The objective runner's parent: ``measure.py MODE [--keys FILE] -- COMMAND...``.

It reads its token from stdin (harnessdrive hands it over a pipe it drains here), makes itself
unreadable to the processes of its user (no /proc/<pid>/fd, mem or environ for the workload),
then runs COMMAND as a child whose stdout and stderr go to this process's stderr, which is never
read for a value. Modes: ``seconds`` (wall clock), ``cpu-seconds`` (user and system time of the
child and what it waited for), ``peak-memory-kb`` (the largest resident set among them),
``operations`` (the key operations the workload asks of keys whose values only this process
holds: ``harnessdrive_objective.keys()`` on the child's side). In every mode the workload may
hand its result back (``harnessdrive_objective.report(result)``): the report then holds a digest
of it, so a state that does less work by answering otherwise is told apart. The report is one
JSON line on stdout, written after the child has ended, that carries the token. Standard
library only: it never imports anything of the measured repository.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import secrets
import subprocess
import sys
import time
from typing import Any

REPORT_KEY = "harnessdrive-objective"
FDS_VARIABLE = "HARNESSDRIVE_OBJECTIVE_FDS"
_MAX_REQUEST = 1 << 20


class Refused(Exception):
    """The workload broke the counter's protocol: no value."""


def main(argv: list[str]) -> int:
    token = sys.stdin.readline().strip()
    _undumpable()
    if "--" not in argv or not argv[: argv.index("--")]:
        print("usage: measure.py MODE [--keys FILE] -- COMMAND...", file=sys.stderr)
        return 2
    options, command = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    mode = options[0]
    keys_file = options[options.index("--keys") + 1] if "--keys" in options else None
    if not command or mode not in ("seconds", "cpu-seconds", "peak-memory-kb", "operations"):
        print(f"measure.py: unknown mode {mode!r} or no command", file=sys.stderr)
        return 2
    if mode == "operations" and keys_file is None:
        print("measure.py: the operations mode needs --keys FILE", file=sys.stderr)
        return 2
    try:
        report = _measure(mode, command, keys_file)
    except Refused as exc:
        print(f"measure.py: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({REPORT_KEY: token, **report}), flush=True)
    return 0


def _undumpable() -> None:
    """PR_SET_DUMPABLE 0: the workload, though of the same user, cannot open this process's
    descriptors, memory or environment through /proc, nor trace it."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)


def _measure(mode: str, command: list[str], keys_file: str | None) -> dict[str, Any]:
    values: list[Any] = []
    if keys_file is not None:
        with open(keys_file, encoding="utf-8") as handle:
            loaded = json.load(handle)
        # The values stay here: the workload (and the code it imports) never reads them.
        with contextlib.suppress(OSError):
            os.unlink(keys_file)
        if not isinstance(loaded, list):
            raise Refused("the keys file must hold a JSON list")
        values = loaded
    run = _run_workload(command, values)
    if mode == "operations":
        value: float = run.operations
    elif mode == "seconds":
        value = round(run.seconds, 6)
    elif mode == "cpu-seconds":
        value = round(run.usage.ru_utime + run.usage.ru_stime, 6)
    else:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        value = max(run.usage.ru_maxrss, children.ru_maxrss)
    report: dict[str, Any] = {"value": value}
    if run.reported:
        text = json.dumps(run.result, sort_keys=True, separators=(",", ":"))
        report["result"] = int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)
    return report


class _Run:
    """What one run of the workload came to."""

    def __init__(self) -> None:
        self.operations = 0
        self.result: Any = None
        self.reported = False
        self.seconds = 0.0
        self.usage: Any = None


def _run_workload(command: list[str], values: list[Any]) -> _Run:
    """Run the workload with the counter's channel (``harnessdrive_objective``): hand it opaque
    keys, answer and count each ``==``, ``<`` and ``hash`` it asks for, and take its result (as
    values, keys replaced by theirs) whatever the mode."""
    ids = [secrets.token_hex(6) for _ in values]
    by_id = dict(zip(ids, values, strict=True))
    asks_r, asks_w = os.pipe()
    answers_r, answers_w = os.pipe()
    env = dict(os.environ)
    env[FDS_VARIABLE] = f"{asks_w},{answers_r}"
    here = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH", "")]))
    run = _Run()
    began = time.perf_counter()
    child = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=sys.stderr.fileno(),
        env=env,
        pass_fds=(asks_w, answers_r),
    )
    os.close(asks_w)
    os.close(answers_r)
    broken: str | None = None
    with os.fdopen(asks_r, "rb") as asks, os.fdopen(answers_w, "wb", buffering=0) as answers:
        with contextlib.suppress(BrokenPipeError):  # a workload that never asks for its keys
            answers.write((" ".join(ids) + "\n").encode())
        for line in iter(lambda: asks.readline(_MAX_REQUEST), b""):
            request = line.decode("ascii", "replace").split(" ", 1)
            try:
                answer, counted = _answer(request, by_id)
            except (KeyError, ValueError, IndexError, TypeError, RecursionError):
                broken = "the workload sent a request the counter does not know"
                break
            if request[0] == "r":
                if run.reported:
                    broken = "the workload reported its result twice"
                    break
                run.result, run.reported, answer = answer, True, "ok"
            run.operations += counted
            try:
                answers.write(f"{answer}\n".encode())
            except BrokenPipeError:
                break
    _, status, run.usage = os.wait4(child.pid, 0)
    run.seconds = time.perf_counter() - began
    code = os.waitstatus_to_exitcode(status)
    child.returncode = code
    if broken is not None:
        raise Refused(broken)
    if code != 0:
        raise Refused(f"the workload exited with {code}")
    return run


def _answer(request: list[str], by_id: dict[str, Any]) -> tuple[Any, int]:
    kind = request[0].strip()
    args = request[1].split() if len(request) > 1 else []
    if kind == "e":
        return int(by_id[args[0]] == by_id[args[1]]), 1
    if kind == "l":
        return int(by_id[args[0]] < by_id[args[1]]), 1
    if kind == "h":
        return hash(by_id[args[0]]), 1
    if kind == "r":
        return _values(json.loads(request[1]), by_id), 0
    raise ValueError(kind)


def _values(found: Any, by_id: dict[str, Any], depth: int = 0) -> Any:
    """The result with each key's id replaced by its value; anything else is refused."""
    if depth > 32:
        raise ValueError("too deep")
    if isinstance(found, list):
        return [_values(item, by_id, depth + 1) for item in found]
    if isinstance(found, str):
        return by_id[found]
    if isinstance(found, int | float | bool) or found is None:
        return found
    raise ValueError("not a key")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
