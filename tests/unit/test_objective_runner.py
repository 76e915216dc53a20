"""The objective runner and the reading of objective values: a value reaches harnessdrive only
from the runner's report line carrying the sample's token; what the measured code prints, or
writes to its parent, is never read; a hostile line is no value, never an error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.grading.objective import read_report, read_value
from harnessdrive.grading.objective_runner import REPORT_KEY, install_runner

TOKEN = "0123456789abcdef0123456789abcdef"

WORKLOAD = """
import os, sys
from harnessdrive_objective import keys, report
found = keys()
seen, repeated = set(), []
for key in found:
    if key in seen and key not in repeated:
        repeated.append(key)
    seen.add(key)
report(repeated)
print('{"value": 1}')  # what a forger prints: never read
print(1)
try:
    with open(f"/proc/{os.getppid()}/fd/1", "w") as parent:
        parent.write('{"harnessdrive-objective": "guess", "value": 1}\\n')
    print("reached the parent's stdout", file=sys.stderr)
except OSError:
    pass
"""


def _run(tmp_path: Path, workload: str, values: list[int]) -> subprocess.CompletedProcess[str]:
    parent = install_runner(tmp_path / "runner")
    (tmp_path / "workload.py").write_text(workload)
    (tmp_path / "keys.json").write_text(json.dumps(values))
    argv = [sys.executable, "-I", str(parent), "operations", "--keys", "keys.json", "--"]
    return subprocess.run(
        [*argv, sys.executable, "workload.py"],
        cwd=tmp_path,
        input=f"{TOKEN}\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_runner_counts_operations_from_outside_the_workload(tmp_path: Path) -> None:
    done = _run(tmp_path, WORKLOAD, [3, 1, 3, 2, 1])
    assert done.returncode == 0, done.stderr
    reports = [json.loads(line) for line in done.stdout.splitlines() if TOKEN in line]
    assert len(reports) == 1 and reports[0]["value"] > 5
    assert isinstance(reports[0]["result"], int)
    # The workload's prints went to stderr. Where it could reach its parent's stdout (with the
    # privilege to read another process's descriptors), its line lacks the token: not read.
    assert '{"value": 1}' in done.stderr
    log = _log(tmp_path, *done.stdout.splitlines())
    assert read_report(log, TOKEN) == (reports[0]["value"], reports[0]["result"])
    # The keys' values stayed with the runner: the file is gone before the workload starts.
    assert not (tmp_path / "keys.json").exists()


def test_a_workload_that_answers_otherwise_gets_another_result(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    honest = _run(tmp_path / "a", WORKLOAD, [3, 1, 3])
    lazy = "from harnessdrive_objective import keys, report\nkeys()\nreport([])\n"
    (tmp_path / "b").mkdir()
    cheat = _run(tmp_path / "b", lazy, [3, 1, 3])
    assert honest.returncode == 0 and cheat.returncode == 0
    first, second = (
        json.loads(next(line for line in run.stdout.splitlines() if TOKEN in line))
        for run in (honest, cheat)
    )
    assert second["value"] == 0 and first["result"] != second["result"]


def test_a_request_the_counter_does_not_know_is_no_value(tmp_path: Path) -> None:
    forged = (
        "import os\nfrom harnessdrive_objective import keys\nkeys()\n"
        "asks = int(os.environ['HARNESSDRIVE_OBJECTIVE_FDS'].split(',')[0])\n"
        "os.write(asks, b'value 1\\n')\n"
    )
    done = _run(tmp_path, forged, [1, 2])
    assert done.returncode == 1 and REPORT_KEY not in done.stdout


def _log(tmp_path: Path, *lines: str) -> Path:
    log = tmp_path / "grade-objective-1.log"
    log.write_text("$ command\n# run as: command\n" + "".join(f"{line}\n" for line in lines))
    return log


def test_only_the_line_with_the_token_is_read(tmp_path: Path) -> None:
    report = json.dumps({REPORT_KEY: TOKEN, "value": 20741, "result": 7})
    log = _log(tmp_path, report, '{"value": 1}', "1")
    assert read_report(log, TOKEN) == (20741.0, 7.0)
    assert read_report(_log(tmp_path, '{"value": 1}', "1"), TOKEN) is None
    # Two lines with the token: the workload cannot know it, so something is wrong.
    assert read_report(_log(tmp_path, report, report), TOKEN) is None


@pytest.mark.parametrize(
    "line",
    [
        '{"value": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"value": ' + "[" * 2000 + "1" + "]" * 2000 + "}",
        '{"value": 1e999}',
        '{"value": true}',
        '{"value": "1"}',
        '{"value": {"value": 1}}',
        "{" * 50_000,
        "\udcff" * 10,
    ],
)
def test_a_hostile_value_line_is_no_value_never_an_error(tmp_path: Path, line: str) -> None:
    log = tmp_path / "grade-objective-1.log"
    log.write_bytes(("$ c\n# run as: c\n" + line + "\n").encode("utf-8", "surrogateescape"))
    # A plain command's value is its output's last number, if any; never an error.
    assert read_value(log) in (None, 1.0)
    hostile = line.replace('"value"', f'"{REPORT_KEY}": "{TOKEN}", "value"')
    log.write_bytes(("$ c\n# run as: c\n" + hostile + "\n").encode("utf-8", "surrogateescape"))
    assert read_report(log, TOKEN) is None


def test_a_json_line_over_the_bound_gives_no_value_even_when_it_is_valid(
    tmp_path: Path,
) -> None:
    # A line longer than the bound is never parsed as JSON, however valid: the padding makes
    # a report over 4 KiB, and its value is not read (neither as JSON nor as its last number).
    padding = "x" * 5000
    log = _log(tmp_path, json.dumps({"value": 5, "pad": padding}))
    assert read_value(log) is None
    report = json.dumps({REPORT_KEY: TOKEN, "value": 5, "pad": padding})
    assert read_report(_log(tmp_path, report), TOKEN) is None
    # Under the bound the same line is read.
    short = json.dumps({REPORT_KEY: TOKEN, "value": 5, "pad": "x" * 100})
    assert read_report(_log(tmp_path, short), TOKEN) == (5.0, None)


@pytest.mark.parametrize("field", ["value", "result"])
def test_an_integer_too_large_for_a_float_is_no_value_never_an_error(
    tmp_path: Path, field: str
) -> None:
    # Under the line bound and the integer conversion limit, yet past any float.
    huge = int("9" * 400)
    values: dict[str, object] = {"value": 1, "result": 2, field: huge}
    log = _log(tmp_path, json.dumps({REPORT_KEY: TOKEN, **values}))
    expected = None if field == "value" else (1.0, None)
    assert read_report(log, TOKEN) == expected
    assert read_value(_log(tmp_path, json.dumps({"value": huge}))) is None
