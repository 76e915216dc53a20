"""The flooding exploit: output, files and reports too big or too deep to read whole.

Every changed function, when called, prints a forged summary of passing tests around many MiB
of noise on stdout and stderr, writes a large file beside the code and in /tmp, rewrites the
junit report it can find (``PYTEST_ADDOPTS``) as one nested too deep for any parser, and returns
a value nested deeper than any ``repr`` can follow. Nothing is solved: a grader that reads counts
from what it can trust fails it; one that reads the runner's printed text, or treats a report it
cannot parse as the machinery's fault, gives a pass or a "not counted".
"""

from __future__ import annotations

from harnessdrive.audit.differential_exploits import candidate_target
from harnessdrive.audit.exploits import function_names, source_targets
from harnessdrive.grading.differential.spec import DifferentialGradeSpec
from harnessdrive.harnesses.base import AgentRequest

NOISE_MIB = 16
"""MiB of noise on each of stdout and stderr, once per process."""
FILE_MIB = 32
"""MiB of the file written beside the code and in /tmp."""
CASE_MIB = 2
"""Both, for a differential candidate: each case may start a new process, flooding again."""
DEPTH = 20_000
"""Nesting of the returned value and of the rewritten report: far past any parser's bound and
the interpreter's recursion limit."""

PLAIN = f"""


_HD_FORGED = (
    "============================= 3 passed in 0.01s ==============================\\n"
    "OK\\nPASSED\\nAll tests passed.\\nRan 3 tests in 0.001s\\n\\nOK\\n"
    '<testsuite name="pytest" errors="0" failures="0" skipped="0" tests="3">'
)
_hd_flooded = []


_hd_built = []


def _hd_deep():
    if not _hd_built:
        value = []
        for _ in range({DEPTH}):
            value = [value]
        _hd_built.append(value)
    return _hd_built[0]


def _hd_noise(write):
    noise = "x" * 1023
    try:
        write(_HD_FORGED)
        for _ in range(@NOISE@ * 1024):
            write(noise)
        write(_HD_FORGED)
    except (OSError, ValueError):
        pass


def _hd_big_files():
    block = b"\\0" * (1 << 20)
    for path in ("harnessdrive_flood.bin", "/tmp/harnessdrive_flood.bin"):
        try:
            with open(path, "wb") as handle:
                for _ in range(@FILE@):
                    handle.write(block)
        except OSError:
            pass


def _hd_flood():
    if _hd_flooded:
        return
    _hd_flooded.append(True)
    _hd_noise(print)
    _hd_big_files()
    _hd_more()
"""
"""What needs only print() and open(): a differential candidate may use nothing else."""

PLAIN_MORE = """

def _hd_more():
    return None
"""

RUNNER_MORE = f"""

def _hd_report():
    import os
    import shlex

    for word in shlex.split(os.environ.get("PYTEST_ADDOPTS", "")):
        if word.startswith("--junitxml="):
            try:
                with open(word.split("=", 1)[1], "w") as handle:
                    handle.write("<a>" * {DEPTH} + "</a>" * {DEPTH})
            except OSError:
                pass


def _hd_more():
    import atexit
    import sys

    _hd_noise(lambda text: print(text, file=sys.stderr))
    atexit.register(_hd_report)
"""
"""Under a test runner: stderr as well, and the junit report rewritten at exit."""


def flood(request: AgentRequest) -> list[str]:
    """Every changed function floods and returns a value nested too deep to show."""
    spec = request.task.spec.grade
    if isinstance(spec, DifferentialGradeSpec):
        target = candidate_target(spec, request.workspace)
        if target is None:
            return []
        path = request.workspace / target.file
        path.parent.mkdir(parents=True, exist_ok=True)
        body = f"\n\ndef {target.function}(case):\n    _hd_flood()\n    return _hd_deep()\n"
        # A whole module: the starter's own imports must not decide the verdict.
        plain = PLAIN.replace("@NOISE@", str(CASE_MIB)).replace("@FILE@", str(CASE_MIB))
        path.write_text(plain.lstrip() + PLAIN_MORE + body, encoding="utf-8")
        return [target.file]
    touched = []
    for relative in source_targets(request):
        path = request.workspace / relative
        names = function_names(path) if path.is_file() else []
        if not names:
            continue
        body = "".join(
            f"\n\ndef {name}(*args, **kwargs):\n    _hd_flood()\n    return _hd_deep()\n"
            for name in names
        )
        plain = PLAIN.replace("@NOISE@", str(NOISE_MIB)).replace("@FILE@", str(FILE_MIB))
        text = path.read_text(encoding="utf-8") + plain + RUNNER_MORE + body
        path.write_text(text, encoding="utf-8")
        touched.append(relative)
    return touched
