"""The task's own commands (an oracle, a generator), run on the host in the task folder.

They are the task author's code, never the agent's: no sandbox, but the allowlisted
environment only (no credentials) and a time limit per call. A case goes in as JSON on stdin,
or in a file where a word of the command is ``{case}``; the answer comes back as JSON on stdout.
"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harnessdrive.sandbox.env import base_environment

CASE_WORD = "{case}"
OFF_WORD = "{off}"
PYTHON_WORD = "python"
MAX_OUTPUT = 64 * 1024 * 1024
"""Bytes of an answer read from a task command (a larger one is a broken command)."""


class TaskCommandError(Exception):
    """A task command failed: the caller says whose failure it is."""


class TaskCommandTimeout(TaskCommandError):
    """A task command took over its time limit (asking again may do)."""


def run_json_command(
    folder: Path,
    words: Sequence[str],
    *,
    case: Any = None,
    fill: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float,
) -> Any:
    """What ``words`` prints as JSON, run in ``folder`` with ``{name}`` words of ``fill``
    replaced and ``case`` (unless None) given on stdin or as the ``{case}`` file."""
    with tempfile.TemporaryDirectory(prefix="harnessdrive-task-command-") as scratch:
        home = Path(scratch)
        text = None if case is None else json.dumps(case)
        argv = [fill_words(word, fill or {}) for word in words]
        stdin: str | None = text
        if text is not None and any(CASE_WORD in word for word in argv):
            case_file = home / "case.json"
            case_file.write_text(text, encoding="utf-8")
            argv = [word.replace(CASE_WORD, str(case_file)) for word in argv]
            stdin = None
        environment = base_environment(home, home, extra=env)
        name = Path(argv[0]).name if argv else "the command"
        try:
            out = subprocess.run(
                argv,
                cwd=folder,
                env=environment,
                input=(stdin or "").encode(),
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise TaskCommandTimeout(f"{name} took over {timeout:g}s") from None
        except OSError as exc:
            if exc.errno == errno.EAGAIN:  # the machine is out of processes for now
                raise TaskCommandTimeout(f"{name} cannot start now: {exc.strerror}") from None
            raise TaskCommandError(f"{name} cannot run: {exc.strerror}") from None
    if out.returncode != 0:
        tail = out.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise TaskCommandError(f"{name} exited {out.returncode}: {tail[0][:200]}")
    if len(out.stdout) > MAX_OUTPUT:
        raise TaskCommandError(f"{name} printed over {MAX_OUTPUT} bytes")
    try:
        return json.loads(out.stdout)
    except ValueError:
        raise TaskCommandError(f"{name} did not print one JSON value") from None


def fill_words(word: str, fill: Mapping[str, str]) -> str:
    """``word`` with each ``{name}`` of ``fill`` replaced, and ``{python}`` by the interpreter
    harnessdrive runs under (never a ``python3`` looked up on the host's PATH)."""
    for name, value in {PYTHON_WORD: sys.executable, **fill}.items():
        word = word.replace("{" + name + "}", value)
    return word


def switched_off(
    words: Sequence[str], switches: Mapping[str, str], off: Sequence[str]
) -> tuple[list[str], dict[str, str]]:
    """The command with the rules ``off`` switched off: ``{off}`` words get them joined by
    commas, and each rule's switch is added (see :func:`switched`)."""
    joined = ",".join(sorted(off))
    argv = [word.replace(OFF_WORD, joined) for word in words]
    return switched(argv, [switches[rule] for rule in sorted(off) if rule in switches])


def switched(words: Sequence[str], switches: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The command and the environment with each switch on: ``NAME=value`` is a variable,
    anything else a word added to the command; switches setting one variable join their
    values with commas."""
    argv, env = list(words), dict[str, str]()
    for switch in switches:
        name, equals, value = switch.partition("=")
        if equals and name and not name.startswith("-") and name.replace("_", "").isalnum():
            # Two rules switched by one variable compose: the values joined by commas.
            env[name] = f"{env[name]},{value}" if name in env else value
        else:
            argv.append(switch)
    return argv, env
