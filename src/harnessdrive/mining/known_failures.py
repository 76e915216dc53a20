"""Tests known to fail at HEAD, left out of the test command so the rest can judge commits.

One failing test on the main branch (an unset variable, a date that passed) would otherwise
stop mining. The user lists the tests (``--known-failures FILE``, pytest node ids, one a line)
or asks mining to record HEAD's failures (``--known-failures head``): HEAD's suite runs once,
its junit report names the failing tests, and each becomes a ``--deselect`` (a module that
fails to import, an ``--ignore``). The command every task is written with carries them, so
``check`` and ``run`` leave the same tests out. Only pytest can leave out single tests by
name; other runners need a narrower ``--test-cmd``.
"""

from __future__ import annotations

import dataclasses
import shlex
import shutil
from pathlib import Path

from harnessdrive.errors import Setting, UserError
from harnessdrive.mining.checks import Checker
from harnessdrive.mining.failures import failing_tests
from harnessdrive.mining.focus import is_pytest_command
from harnessdrive.mining.gitread import run_git
from harnessdrive.mining.validation import check_head

RECORD_AT_HEAD = "head"
_SETTING = (Setting("known_failures", "FILE|head"),)


def read_known_failures(path: Path) -> list[str]:
    """Node ids from a file, one a line; blank lines and ``#`` comments are left out."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        message = f"cannot read the known failures in {path}: {exc}"
        raise UserError(message, settings=_SETTING) from None
    ids = [line.split(" #", 1)[0].strip() for line in text.splitlines()]
    return [i for i in ids if i and not i.startswith("#")]


def leave_out(command: str, node_ids: list[str]) -> str:
    """``command`` with each test deselected (or, for a whole module, ignored)."""
    if not node_ids:
        return command
    if not is_pytest_command(command):
        raise UserError(
            "known failures can be left out only of a pytest command; narrow the test command"
            " instead",
            settings=(Setting("test_command", "CMD"),),
        )
    options = [
        f"--deselect {shlex.quote(node)}" if "::" in node else f"--ignore={shlex.quote(node)}"
        for node in node_ids
    ]
    return command + " " + " ".join(options)


def node_ids(reported: list[str], files: set[str]) -> list[str]:
    """pytest node ids for junit's ``classname::name`` (``tests.test_a.TestX::test_y``), found
    against the files of the tree; a module that failed to import is its path."""
    found = []
    for entry in reported:
        classname, _, name = entry.rpartition("::")
        dotted = (classname or name).split(".")
        inner = [name] if classname else []
        for cut in range(len(dotted), 0, -1):
            path = "/".join(dotted[:cut]) + ".py"
            if path in files:
                found.append("::".join([path, *dotted[cut:], *inner]))
                break
    return list(dict.fromkeys(found))


def record_head_failures(checker: Checker, head: str) -> tuple[Checker, list[str]]:
    """Run HEAD's suite once; the checker whose command leaves out what failed, and those."""
    try:
        check_head(checker, head)
        return checker, []
    except UserError as error:
        reported = failing_tests(checker.logs / "head")
        if not reported:
            raise error from None  # setup failed, or no report names a test: HEAD's own error
    finally:
        shutil.rmtree(checker.staging / "head", ignore_errors=True)
        shutil.rmtree(checker.scratch / "head", ignore_errors=True)
    listing = run_git(checker.repo, ["ls-tree", "-r", "-z", "--name-only", "--full-tree", head])
    files = {p.decode("utf-8", "replace") for p in listing.split(b"\0") if p}
    ids = node_ids(reported, files)
    if not ids:
        raise UserError(
            f"HEAD fails {len(reported)} tests, and none of them could be named as a pytest node"
            " id to leave out; list them in a file of known failures",
            settings=_SETTING,
        )
    command = leave_out(checker.settings.test_command, ids)
    settings = dataclasses.replace(checker.settings, test_command=command)
    return dataclasses.replace(checker, settings=settings), ids
