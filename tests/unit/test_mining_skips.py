"""What HEAD's run skipped and why, and why a setup or a run failed, read from their logs."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.grading.verdict import SetupRun
from harnessdrive.mining.failures import explain_setup_failure, explain_test_failure
from harnessdrive.mining.skips import read_skips, skip_reason

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.test_a" name="test_one"/>
<testcase classname="tests.test_a" name="test_two"><failure message="boom"/></testcase>
{skipped}
</testsuite></testsuites>
"""
IMPORT_SKIP = (
    '<testcase classname="tests.test_rsa" name="test_{n}"><skipped type="pytest.skip"'
    " message=\"could not import 'cryptography': No module named 'cryptography'\"/></testcase>"
)


def test_skips_are_counted_and_grouped_by_reason(tmp_path: Path) -> None:
    skipped = "".join(IMPORT_SKIP.format(n=n) for n in range(3))
    skipped += (
        '<testcase classname="t" name="w"><skipped message="Skipped: needs Windows"/></testcase>'
    )
    (tmp_path / "junit-tests.xml").write_text(REPORT.format(skipped=skipped))
    report = read_skips(tmp_path)
    assert report is not None
    assert (report.skipped, report.total, report.many) == (4, 6, True)
    assert report.reasons == (("cryptography not installed", 3), ("needs Windows", 1))
    assert report.describe().startswith("4 of 6 tests skipped: cryptography not installed (3)")
    assert explain_test_failure(tmp_path) == "1 test fails: tests.test_a::test_two"


def test_no_report_means_no_skip_record(tmp_path: Path) -> None:
    assert read_skips(tmp_path) is None
    (tmp_path / "junit-tests.xml").write_text("<not-xml")
    assert read_skips(tmp_path) is None
    assert skip_reason("") == "no reason given"


def test_a_setup_failure_names_the_step_and_the_missing_network(tmp_path: Path) -> None:
    log = tmp_path / "grade-setup.log"
    log.write_text(
        "$ python3 -m venv .venv && .venv/bin/pip install -e .\n"
        "WARNING: Retrying ... Failed to establish a new connection: [Errno 111]\n"
        "ERROR: Could not find a version that satisfies the requirement setuptools"
        " (from versions: none)\n"
    )
    run = SetupRun(commands=("python3 -m venv .venv && .venv/bin/pip install -e .",),
                   exit_code=1, timed_out=False, seconds=2.0)  # fmt: skip
    offline = explain_setup_failure(run, log, network=False, timeout=600)
    assert offline.startswith("the setup step `python3 -m venv .venv && .venv/bin/pip install")
    assert "exited with status 1" in offline and "--setup-network" in offline
    online = explain_setup_failure(run, log, network=True, timeout=600)
    assert "--setup-network" not in online and "could not reach the package registry" in online
    log.write_text("$ make deps\nmake: cc: command not found\n")
    assert explain_setup_failure(run, log, network=False, timeout=600).endswith(
        "exited with status 1: command not found"
    )
    timed = run.model_copy(update={"timed_out": True, "exit_code": None})
    assert "did not finish within 600 s" in explain_setup_failure(
        timed, log, network=False, timeout=600
    )
