"""How each test runner is started in the grading copy so that the copy cannot replace it.

A grading command is the task author's shell text. Where it starts a runner we know
(``python -m pytest``, ``pytest``, ``python -m unittest``, ``node --test``), that invocation is
rewritten: the Python runners start through harnessdrive's own launcher (``boot/hdrun.py``),
copied to a read-only folder outside the copy; node's runner gets its junit reporter. Anything
else runs as written and is judged by its exit code.
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

RunnerKind = Literal["pytest", "unittest", "node"]
LAUNCHER = "hdrun.py"
COPY_ENV = "HARNESSDRIVE_GRADING_COPY"
JUNIT_ENV = "HARNESSDRIVE_JUNIT"
OWN_ENV = "HARNESSDRIVE_OWN_MODULES"
RUN_ALL_ENV = "HARNESSDRIVE_RUN_ALL"

_END = r"(?=$|[\s;&|)])"
_WORD = r"[^\s;&|()'\"]"
_LEAD = rf"(?P<lead>(?:^|[;&|(])\s*(?:[A-Za-z_]\w*={_WORD}*\s+)*)"
_PYTHON_M = re.compile(
    rf"(?P<lead>^|[\s;&|(])(?P<py>(?:{_WORD}*/)?python[0-9.]*)"
    rf"(?P<flags>(?:\s+(?:-[XW]\s*{_WORD}+|-[A-Za-ln-z]+))*)\s+-m\s+(?P<mod>pytest|unittest){_END}"
)
_BARE_PYTEST = re.compile(rf"{_LEAD}(?P<tool>(?:{_WORD}*/)?(?:py\.test|pytest)){_END}")
_NODE_TEST = re.compile(
    rf"(?P<head>(?:^|[\s;&|(])(?:{_WORD}*/)?node(?:\s+-{_WORD}+)*\s+--test){_END}"
)
_PYTEST_SELECT = re.compile(
    r"(^|\s)(-k|-m|--deselect|--lf|--last-failed|--sw|--stepwise)(\s|=|$)|::"
)
_UNITTEST_SELECT = re.compile(r"(^|\s)-k(\s|$)|(^|\s)[\w.]*\.[A-Z]\w*(\.\w+)?(\s|$)")
_NODE_SELECT = re.compile(r"--test-(name|skip)-pattern|--test-only")
_MASKED_AFTER = re.compile(r"^[^;|]*?(\|\||;|\|)")


@dataclass(frozen=True)
class PreparedCommand:
    command: str
    """What runs: the author's command with the runner invocation rewritten."""
    runner: RunnerKind | None
    """The one runner the command starts, when it starts exactly one that we know."""
    env: dict[str, str]
    selects: bool
    """The command picks tests by name or marker: planted tests may rightly be left out."""
    passes_status: bool
    """The runner's exit status is the command's (no ``|| true``, pipe or ``;`` after it)."""
    writes_junit: bool
    """The rewritten command writes a junit report of ours (unittest and node)."""
    interpreters: tuple[str, ...] = ()
    """The Python interpreters the rewritten runner invocations start, as the command names them."""


LAUNCHER_MODULE = "hdrun_main.py"
"""The launcher's code, imported by the script the commands start (``LAUNCHER``): a script is
compiled on every start, an imported module is not (its bytecode is placed beside it)."""
_LAUNCHER_SCRIPT = b"""import sys
sys.dont_write_bytecode = True
from hdrun_main import main
sys.exit(main())
"""


@functools.cache
def launcher_source() -> bytes:
    # Read once per process: every grading copy gets the launcher written beside it.
    return resources.files("harnessdrive.grading").joinpath("boot", LAUNCHER).read_bytes()


def install_launcher(folder: Path) -> Path:
    """Write the launcher into ``folder`` (made read-only in the sandbox); return the script
    the commands start. Python puts the script's folder first on ``sys.path``, so its module
    is imported from there, never from the copy or ``PYTHONPATH``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / LAUNCHER_MODULE).write_bytes(launcher_source())
    path = folder / LAUNCHER
    path.write_bytes(_LAUNCHER_SCRIPT)
    return path


def detect(command: str) -> RunnerKind | None:
    """The runner ``command`` starts, when it starts exactly one invocation we know."""
    kinds = [m.group("mod") for m in _PYTHON_M.finditer(command)]
    rest = _PYTHON_M.sub(" ", command)
    kinds += ["pytest" for _ in _BARE_PYTEST.finditer(rest)]
    kinds += ["node" for _ in _NODE_TEST.finditer(command)]
    if len(kinds) != 1:
        return None
    kind = kinds[0]
    return kind if kind in ("pytest", "unittest", "node") else None  # type: ignore[return-value]


def witnessable(command: str) -> RunnerKind | None:
    """The runner whose junit report we read for ``command``, when there is one."""
    runner = detect(command)
    if runner == "node" and "--test-reporter" in command:
        return None
    return runner


def prepare(
    command: str,
    *,
    launcher: Path,
    python: str,
    junit: Path,
    copy: Path,
    own_modules: tuple[str, ...],
    run_all: bool,
) -> PreparedCommand:
    """Rewrite the runner invocations in ``command``; ``run_all`` keeps fail-fast options off."""
    runner = detect(command)
    env = {COPY_ENV: str(copy), OWN_ENV: ",".join(own_modules)}
    if run_all:
        env[RUN_ALL_ENV] = "1"
    boot = shlex.quote(str(launcher))
    interpreters: list[str] = []

    def python_m(match: re.Match[str]) -> str:
        interpreters.append(match["py"])
        return f"{match['lead']}{match['py']}{match['flags']} -s {boot} {match['mod']}"

    rewritten = _PYTHON_M.sub(python_m, command)

    def bare(match: re.Match[str]) -> str:
        tool = match["tool"]
        named = tool.rpartition("/")[0] + "/python" if "/" in tool else python
        interpreters.append(named)
        interpreter = named if "/" in tool else shlex.quote(python)
        return f"{match['lead']}{interpreter} -s {boot} pytest-bare"

    rewritten = _BARE_PYTEST.sub(bare, rewritten)
    if "--test-reporter" not in rewritten:
        reporters = (
            f" --test-reporter=junit --test-reporter-destination={shlex.quote(str(junit))}"
            " --test-reporter=spec --test-reporter-destination=stdout"
        )
        rewritten = _NODE_TEST.sub(lambda m: m["head"] + reporters, rewritten)
    if runner == "unittest":
        env[JUNIT_ENV] = str(junit)
    selects = {
        "pytest": _PYTEST_SELECT,
        "unittest": _UNITTEST_SELECT,
        "node": _NODE_SELECT,
    }
    picks = runner is not None and selects[runner].search(_runner_args(command, runner)) is not None
    return PreparedCommand(
        command=rewritten,
        runner=runner,
        env=env,
        selects=picks,
        passes_status=runner is not None and _passes_status(command, runner),
        writes_junit=runner == "unittest" or (runner == "node" and witnessable(command) == "node"),
        interpreters=tuple(dict.fromkeys(interpreters)),
    )


def _runner_match(command: str, runner: RunnerKind) -> re.Match[str] | None:
    if runner == "node":
        return _NODE_TEST.search(command)
    found = _PYTHON_M.search(command)
    return found if found else _BARE_PYTEST.search(command)


def _runner_args(command: str, runner: RunnerKind) -> str:
    found = _runner_match(command, runner)
    if found is None:
        return ""
    tail = command[found.end() :]
    return re.split(r"&&|\|\||[;|]", tail, maxsplit=1)[0]


def _passes_status(command: str, runner: RunnerKind) -> bool:
    found = _runner_match(command, runner)
    return found is not None and not _MASKED_AFTER.match(command[found.end() :])
