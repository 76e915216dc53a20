"""Every error message that points at a log names a file that exists once the command is over."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from harnessdrive.checking.suite import self_test
from harnessdrive.cli.variants import resolve_variants
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task

FAILING_SETUP = "echo the setup cannot install its dependencies; exit 3"
_SEE = re.compile(r"see (/\S+?)\)?$")


def named_log(message: str) -> Path:
    found = _SEE.search(message)
    assert found is not None, message
    return Path(found.group(1))


def test_check_names_the_setup_log_of_each_case_and_keeps_it(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, [add_task(setup=[FAILING_SETUP])]))
    logs = tmp_path / "check-logs"
    (report,) = self_test(suite, logs=logs, sandbox="none", python=sys.executable)
    assert report.problems
    for problem in report.problems:
        log = named_log(problem)
        assert log.is_file() and log.is_relative_to(logs)
        assert "cannot install its dependencies" in log.read_text()


def test_a_trial_whose_setup_fails_names_its_setup_log(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, [add_task(setup=[FAILING_SETUP])]))
    plan = make_plan(suite, resolve_variants(suite, ["reference"], commands=[]), 1)
    summary = execute(plan, RunOptions(results=tmp_path / "results", sandbox="none"))
    (result,) = summary.trials
    assert result.status == "could_not_run" and result.note is not None
    log = named_log(result.note)
    assert log.is_file() and "cannot install its dependencies" in log.read_text()
    recorded = json.loads(next((tmp_path / "results").glob("trials/**/result.json")).read_text())
    assert recorded["note"] == result.note
