"""Runs inside the grading sandbox: answers cases with the candidate, one line per event.

Usage: ``python -I -B worker_main.py ROOT MODULE FUNCTION INPUTS RESULTS``. It imports nothing
of harnessdrive (only the standard library) and never sees an answer: INPUTS holds one
``{"i", "input"}`` object per line, appended while it runs and ended by an ``END`` line.
RESULTS gets ``B <i>`` before case i is called, then
``R <json>`` with its answer or error, so the supervisor outside knows which case hung or
crashed the process.
"""

import importlib
import json
import sys
import time
from collections.abc import Iterator
from typing import Any


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


def main(argv: list[str]) -> int:
    root, module_name, function_name, inputs, results_path = argv
    # Kept open for the worker's whole life, line-buffered so each line is seen at once.
    results = open(results_path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
    sys.stdout = sys.stderr  # the candidate's prints go to the log, never into the results
    sys.path.append(root)
    try:
        function = getattr(importlib.import_module(module_name), function_name)
    except BaseException as exc:
        results.write("L " + json.dumps(f"{type(exc).__name__}: {exc}"[:300]) + "\n")
        return 3
    for row in _requests(inputs):
        results.write(f"B {row['i']}\n")
        try:
            text = json.dumps({"i": row["i"], "answer": _plain(function(row["input"]))})
        except BaseException as exc:
            text = json.dumps({"i": row["i"], "error": f"{type(exc).__name__}: {exc}"[:300]})
        results.write("R " + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
