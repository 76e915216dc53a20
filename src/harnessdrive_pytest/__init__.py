"""The pytest entry point of harnessdrive's eval plugin (``pytest11``).

Installed with harnessdrive, it is loaded by every pytest run in the environment, so it imports
nothing of harnessdrive until an eval file is collected: an ordinary test run pays for a few
option definitions and nothing else. The plugin itself is :mod:`harnessdrive.pytest_plugin`.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from typing import Any

import pytest

PROPERTY = "harnessdrive"
FORECAST = "harnessdrive_forecast"
UNAVAILABLE = "harnessdrive_unavailable"
_SESSION = pytest.StashKey[str]()
_SEEN = pytest.StashKey[list[tuple[str, dict[str, Any]]]]()
_RUNNING = pytest.StashKey[pytest.Session]()


def pytest_sessionstart(session: pytest.Session) -> None:
    # The summary may fail the session (a gate that does not hold): it needs the session.
    session.config.stash[_RUNNING] = session


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    _keep_harnessdrive_unrewritten(pluginmanager)
    from harnessdrive_pytest import hookspecs

    pluginmanager.add_hookspecs(hookspecs)
    group = parser.getgroup("harnessdrive", "harnessdrive evals (eval_*.py cases)")
    add = group.addoption
    add(
        "--harness",
        action="append",
        dest="eval_harness",
        default=[],
        metavar="NAME",
        help="Run only these harnesses' cells (repeatable, or a,b).",
    )
    add(
        "--model",
        action="append",
        dest="eval_model",
        default=[],
        metavar="TEXT",
        help="Run only cells whose model contains TEXT, or the exact cell (repeatable).",
    )
    add(
        "--effort",
        action="append",
        dest="eval_effort",
        default=[],
        metavar="RUNG",
        help="Run only cells at this resolved effort rung (repeatable).",
    )
    add(
        "--treatment",
        action="append",
        dest="eval_treatment",
        default=[],
        metavar="NAME",
        help="Run only this arm: control or a treatment's name (repeatable).",
    )
    add(
        "--eval-repeat",
        dest="eval_repeat",
        type=int,
        default=None,
        metavar="N",
        help="Run every cell N times (overrides the cases' repeat=).",
    )
    add(
        "--dry-run",
        dest="eval_dry_run",
        action="store_true",
        default=False,
        help="List every cell with its cost forecast; run nothing.",
    )
    add(
        "--replay",
        dest="eval_replay",
        default=None,
        metavar="FOLDER",
        help="Replay the cells stored in FOLDER (a session, results or trial folder): metrics "
        "and prices derived again from each CLI's stored session log, the stored verdicts "
        "kept; no agent starts and nothing is spent.",
    )
    add(
        "--max-usd",
        dest="eval_max_usd",
        type=float,
        default=None,
        metavar="USD",
        help="Spend cap across the whole session; required when a cell spends money.",
    )
    add(
        "--prices",
        dest="eval_prices",
        action="append",
        default=[],
        metavar="FILE",
        help="A price override file (docs/pricing.md); repeatable.",
    )
    add(
        "--eval-results",
        dest="eval_results",
        default=None,
        metavar="DIR",
        help="Root of the eval results (default: the harnessdrive_results ini key).",
    )
    add(
        "--eval-sandbox",
        dest="eval_sandbox",
        default="auto",
        metavar="KIND",
        help="The trials' sandbox: auto | bwrap | none.",
    )
    add(
        "--eval-network",
        dest="eval_network",
        default="host",
        metavar="KIND",
        help="The agents' network: host | loopback | none.",
    )
    add(
        "--eval-allow-unavailable",
        dest="eval_allow_unavailable",
        action="store_true",
        default=False,
        help="Skip the cells that cannot run (a CLI missing, no login, an unreachable "
        "endpoint) and still pass the session; without it such a session exits non-zero.",
    )
    add(
        "--record-goldens",
        dest="record_goldens",
        action="store_true",
        default=False,
        help="Record each case's golden from this run instead of comparing against it.",
    )
    parser.addini(
        "harnessdrive_matrix",
        "Matrix entries harness/model[/effort], one a line.",
        type="linelist",
        default=[],
    )
    parser.addini(
        "harnessdrive_skills_dir", "Where skills live (relative to the rootdir).", default="skills"
    )
    parser.addini(
        "harnessdrive_results",
        "Root of the eval results (relative to the rootdir).",
        default=".harnessdrive/evals",
    )
    parser.addini(
        "harnessdrive_prices", "Price override files, one a line.", type="linelist", default=[]
    )
    parser.addini(
        "harnessdrive_models",
        "Model catalogue lines, 'harness/model: line=L tier=N released=YYYY-MM-DD cutoff=YYYY-MM'.",
        type="linelist",
        default=[],
    )


def _keep_harnessdrive_unrewritten(pluginmanager: pytest.PytestPluginManager) -> None:
    """pytest marks every package of a distribution with a ``pytest11`` entry point for assert
    rewriting, so harnessdrive itself (a few hundred modules, none of them tests) would be
    recompiled on import under every pytest run: seconds, for nothing. Only this entry point
    needs to be a plugin."""
    hook = getattr(pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set):
        marked.discard("harnessdrive")


def pytest_configure(config: pytest.Config) -> None:
    _check_options(config)
    workerinput = getattr(config, "workerinput", None)
    session = workerinput.get("harnessdrive_session") if workerinput else None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    # Two sessions of one process in one second (pytester, an IDE) must not share a folder.
    config.stash[_SESSION] = str(session or f"{stamp}-{os.getpid()}-{secrets.token_hex(2)}")
    config.stash[_SEEN] = []
    config.pluginmanager.register(_Gatherer(config.stash[_SEEN]), "harnessdrive-gatherer")
    config.addinivalue_line("markers", "eval: a harnessdrive eval cell")


def _check_options(config: pytest.Config) -> None:
    """Options that contradict each other or name nothing: a one-line usage error."""
    replay = config.getoption("eval_replay")
    if replay is None:
        return
    if config.getoption("eval_dry_run"):
        raise pytest.UsageError("--replay and --dry-run: choose one (a replay spends nothing)")
    if config.getoption("record_goldens"):
        raise pytest.UsageError("--replay never records goldens: drop --record-goldens")
    if not Path(replay).expanduser().is_dir():
        raise pytest.UsageError(
            f"--replay {replay}: no such folder (give a session, results or trial folder)"
        )


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker records into the controller's session."""
    node.workerinput["harnessdrive_session"] = node.config.stash[_SESSION]


def is_eval_file(file_path: Path, config: pytest.Config) -> bool:
    """``eval_*.py`` inside an ``evals/`` folder, or named on the command line."""
    if not (file_path.name.startswith("eval_") and file_path.suffix == ".py"):
        return False
    if "evals" in file_path.parent.parts:
        return True
    named = {Path(str(arg).split("::", 1)[0]).absolute() for arg in config.args}
    return file_path.absolute() in named


_CASE_FOLDERS = frozenset({"fixtures", "goldens", "treatments"})


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """What an eval folder holds for its cases is never a test module of this run: its
    fixtures, goldens and treatments, and a task folder (its hidden ``test_*.py`` belong to
    the task's grader, and importing them would stop collection)."""
    if "evals" not in collection_path.parts[:-1] or not collection_path.is_dir():
        return None
    if collection_path.name in _CASE_FOLDERS or (collection_path / "task.toml").is_file():
        return True
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not is_eval_file(file_path, parent.config):
        return None
    from harnessdrive.pytest_plugin.hooks import eval_file

    return eval_file(file_path, parent, parent.config.stash[_SESSION])


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """A dry run in one process forecasts the cells left after -k, -m and the narrowing
    options, then stops as ``--collect-only`` does: pytest lists the cells, nothing runs.
    (Under xdist each worker forecasts its cells as they are handed out.)"""
    if config.getoption("record_goldens"):
        from harnessdrive.pytest_plugin.hooks import golden_owners

        golden_owners(items)
    if not config.getoption("eval_dry_run") or _distributed(config):
        return
    from harnessdrive.pytest_plugin.hooks import forecast_items

    config.stash[_SEEN].extend((FORECAST, f) for f in forecast_items(items))
    config.option.collectonly = True


def _distributed(config: pytest.Config) -> bool:
    return bool(getattr(config, "workerinput", None)) or config.getoption("dist", "no") != "no"


class _Gatherer:
    """Keeps what each cell's report carries, on the controller as in a single process."""

    def __init__(self, seen: list[tuple[str, dict[str, Any]]]) -> None:
        self.seen = seen

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return  # the setup and teardown reports carry the same properties again
        for name, value in report.user_properties:
            if name in (PROPERTY, FORECAST, UNAVAILABLE) and isinstance(value, dict):
                self.seen.append((name, value))


def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    """With ``-v``, a cell's line says its verdict, cost, tokens, seconds, turns and tools."""
    if report.when != "call" or hasattr(report, "wasxfail"):
        return None  # an xfail's word is pytest's own
    props = dict(report.user_properties).get(PROPERTY)
    if not isinstance(props, dict):
        return None
    from harnessdrive_pytest.status import status_line

    word = "PASSED" if report.passed else "FAILED"
    category = "passed" if report.passed else "failed"
    letter = "." if report.passed else "F"
    return (
        category,
        letter,
        (f"{word}  {status_line(props)}", {"green" if report.passed else "red": True}),
    )


def _unavailable(config: pytest.Config) -> dict[str, int]:
    """Each cause of a cell that could not run, with how many cells it stopped."""
    causes: dict[str, int] = {}
    for name, value in config.stash.get(_SEEN, []):
        if name == UNAVAILABLE:
            cause = str(value.get("cause"))
            causes[cause] = causes.get(cause, 0) + 1
    return causes


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A session in which a selected cell could not run evaluated less than it was asked to:
    it fails (CI must not go green on nothing) unless skipping was asked for."""
    config = session.config
    if getattr(config, "workerinput", None) or config.getoption("eval_allow_unavailable"):
        return
    if _unavailable(config) and exitstatus in (
        pytest.ExitCode.OK,
        pytest.ExitCode.NO_TESTS_COLLECTED,
    ):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    seen = config.stash.get(_SEEN, [])
    if getattr(config, "workerinput", None) or not seen:
        return
    from harnessdrive.pytest_plugin.hooks import summarize

    summary = summarize(config, config.stash[_SESSION], seen)
    for line in summary.lines:
        terminalreporter.write_line(line)
    running = config.stash.get(_RUNNING, None)
    if summary.failed and running is not None and running.exitstatus == pytest.ExitCode.OK:
        running.exitstatus = pytest.ExitCode.TESTS_FAILED
    causes = _unavailable(config)
    if causes:
        cells = sum(causes.values())
        if config.getoption("eval_allow_unavailable"):
            verdict = "skipped (--eval-allow-unavailable)"
        else:
            verdict = "the session fails; pass --eval-allow-unavailable to skip them"
        terminalreporter.write_line(f"  {cells} cell(s) could not run: {verdict}")
        for cause, count in causes.items():
            terminalreporter.write_line(f"    {cause} ({count} cell(s))", red=True)
