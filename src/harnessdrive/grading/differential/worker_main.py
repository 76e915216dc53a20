"""Runs inside the grading sandbox: answers cases with the candidate, one line per event.

Usage: ``python -I -B worker_main.py ROOT MODULE FUNCTION INPUTS RESULTS ALLOWED``. It imports
nothing of harnessdrive (only the standard library) and never sees an answer: INPUTS holds one
``{"i", "input"}`` object per line, appended while it runs and ended by an ``END`` line.
RESULTS gets ``B <i>`` before case i is called, then
``R <json>`` with its answer or error, so the supervisor outside knows which case hung or
crashed the process.

Before the candidate is imported, an audit hook (which no Python code can remove) refuses at
run time what the static check refuses in the source, however it is reached (a computed
attribute, a string run as code): importing a module that is neither on ALLOWED (a JSON list;
``null``: no guard) nor the repository's own, starting or forking a process, sockets, ctypes,
and building code objects or loading marshalled code. Each refusal raises in the candidate and
is reported on an ``F <json>`` line, which the grader counts as a forbidden-import finding.
"""

import importlib
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

MAX_ANSWER = 8 * 1024 * 1024
"""Characters of one answer's JSON; a larger one fails its case (it cannot be an answer)."""
REFUSED_EVENTS = frozenset(
    {
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.kill",
        "os.killpg",
        "pty.spawn",
        "subprocess.Popen",
        "code.__new__",
        "function.__new__",
        "sys.setprofile",
        "sys.settrace",
        "sys._current_frames",
        "sys.remote_exec",
    }
)
REFUSED_PREFIXES = ("socket.", "ctypes.", "_ctypes.", "mmap.", "winreg.", "_winapi.")


def _source_outside(filename: object, inside: str) -> bool:
    """Whether ``filename`` (what compile() was given) is a file outside the repository."""
    if isinstance(filename, bytes):
        filename = filename.decode(errors="replace")
    if not isinstance(filename, str) or not os.path.isabs(filename):
        return False  # "<string>" and the like: a string compiled, not a module loaded
    return not os.path.realpath(filename).startswith(inside)


def _guard(root: str, allowed: "frozenset[str]", results: Any) -> None:
    """Refuse, from here on, what a candidate may not do (see the module notes)."""
    for name in sorted(allowed):  # loaded now, so their own imports are not the candidate's
        try:
            importlib.import_module(name)
        except Exception:
            continue
    loaded = frozenset(sys.modules)
    stdlib = frozenset(sys.stdlib_module_names)
    reported: set[str] = set()

    def listed(name: str) -> bool:
        parts = name.split(".")
        return any(".".join(parts[:n]) in allowed for n in range(1, len(parts) + 1))

    def own(name: str) -> bool:
        # The repository comes last on sys.path: a name the standard library has is never its.
        if name.split(".")[0] in stdlib:
            return False
        base = os.path.join(root, *name.split("."))
        return os.path.isfile(base + ".py") or os.path.isfile(os.path.join(base, "__init__.py"))

    def refuse(what: str, error: type[Exception]) -> None:
        if what not in reported:
            reported.add(what)
            results.write("F " + json.dumps(what) + "\n")
        raise error(f"not allowed here: {what}")

    inside = os.path.realpath(root) + os.sep

    def hook(event: str, args: "tuple[Any, ...]") -> None:
        if event == "import":
            name = str(args[0])
            if name not in loaded and not listed(name) and not own(name):
                refuse(f"imports {name}", ImportError)
        elif event in ("marshal.loads", "marshal.load"):
            # How importlib (which raises no "import" event) loads a cached module.
            refuse("loads compiled code (marshal)", ImportError)
        elif event == "compile" and _source_outside(args[1], inside):
            # How importlib loads a module from source: any file but the repository's.
            refuse(f"loads {os.path.basename(str(args[1]))}", ImportError)
        elif event in REFUSED_EVENTS or event.startswith(REFUSED_PREFIXES):
            refuse(f"calls {event}", PermissionError)

    sys.addaudithook(hook)


def _plain(value: object) -> object:
    """The answer as JSON data: sets become sorted lists, tuples lists."""
    if isinstance(value, (set, frozenset)):
        items = [_plain(item) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    return value


def _requests(path: str) -> "Iterator[Any]":
    """Each request line as the supervisor appends it, until its ``END`` line."""
    with open(path, encoding="utf-8") as lines:
        pending = ""
        while True:
            line = lines.readline()
            if not line.endswith("\n"):
                pending += line
                time.sleep(0.0005)
                continue
            line, pending = pending + line, ""
            if line == "END\n":
                return
            yield json.loads(line)


def _own_failure(kind: "type[BaseException]", value: BaseException, tb: object) -> None:
    """The worker's own crash, said without source lines: rendering them compiles the
    worker's files, which the guard would record as the candidate loading them."""
    sys.stderr.write(f"the grading worker failed: {kind.__name__}: {value}\n")


def main(argv: list[str]) -> int:
    root, module_name, function_name, inputs, results_path, allowed = argv
    sys.excepthook = _own_failure
    # Kept open for the worker's whole life, line-buffered so each line is seen at once.
    results = open(results_path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
    sys.stdout = sys.stderr  # the candidate's prints go to the log, never into the results
    sys.path.append(root)
    requests = _requests(inputs)
    modules = json.loads(allowed)
    if modules is not None:
        _guard(root, frozenset(modules), results)
    try:
        function = getattr(importlib.import_module(module_name), function_name)
    except BaseException as exc:
        results.write("L " + json.dumps(f"{type(exc).__name__}: {exc}"[:300]) + "\n")
        return 3
    for row in requests:
        results.write(f"B {row['i']}\n")
        try:
            text = json.dumps({"i": row["i"], "answer": _plain(function(row["input"]))})
        except BaseException as exc:
            text = json.dumps({"i": row["i"], "error": f"{type(exc).__name__}: {exc}"[:300]})
        if len(text) > MAX_ANSWER:
            text = json.dumps({"i": row["i"], "error": f"the answer is over {MAX_ANSWER} bytes"})
        results.write("R " + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
