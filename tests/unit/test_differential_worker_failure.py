"""The grading worker's own crash is the machinery's: its traceback is never recorded as the
candidate loading a forbidden file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harnessdrive.grading.differential.execute import WORKER


def test_a_crashed_worker_records_no_forbidden_load(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "candidate.py").write_text("def answer(case):\n    return case\n")
    inputs, results = tmp_path / "inputs", tmp_path / "results"
    # The second request is not JSON: the worker itself fails reading it.
    inputs.write_text('{"i": 0, "input": 1}\nnot json\n')
    results.write_text("")
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-B",
            str(WORKER),
            str(repo),
            "candidate",
            "answer",
            str(inputs),
            str(results),
            json.dumps(["json"]),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    lines = results.read_text().splitlines()
    assert 'R {"i": 0, "answer": 1}' in lines
    assert not [line for line in lines if line.startswith("F ")], lines
    assert "the grading worker failed: JSONDecodeError" in done.stderr
    assert "Traceback" not in done.stderr
