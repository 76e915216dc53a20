"""Task commands as a new author writes them: a long-lived line-protocol oracle that is asked
again after a slow answer, ``{python}``, and switches that compose."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harnessdrive.errors import GradingError
from harnessdrive.grading.differential.oracle import Oracle
from harnessdrive.grading.differential.spec import OracleSpec
from harnessdrive.grading.differential.task_commands import fill_words, switched_off

SLOW_ONCE = """import json, os, sys, time
for line in sys.stdin:
    asked = json.loads(line)
    if asked["case"] == 3 and os.path.exists("slow"):
        os.remove("slow")  # slow this once: the next process answers at once
        time.sleep(60)
    sys.stdout.write(json.dumps({"answer": [asked["case"] * 2, asked["off"]]}) + "\\n")
    sys.stdout.flush()
"""


def oracle(folder: Path, **fields: object) -> Oracle:
    (folder / "oracle.py").write_text(SLOW_ONCE)
    spec = OracleSpec.model_validate(
        {
            "command": "{python} -I oracle.py",
            "protocol": "lines",
            "rules": ["a", "b"],
            "answer_timeout": 1,
            **fields,
        }
    )
    return Oracle(folder, spec)


def test_a_slow_answer_is_asked_again_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "slow").write_text("")
    asked = oracle(tmp_path)
    try:
        asked.prefetch([(n, ()) for n in range(6)] + [(3, ("b", "a"))])
        assert [asked.answer(n) for n in range(6)] == [[n * 2, []] for n in range(6)]
        assert asked.answer(3, {"a", "b"}) == [6, ["a", "b"]]
        assert asked.calls == 7
        assert asked._lines is not None and asked._lines.starts == 2
    finally:
        asked.close()


def test_an_answer_slow_every_time_stops_with_one_line(tmp_path: Path) -> None:
    asked = oracle(tmp_path, retries=0)
    (tmp_path / "slow").write_text("")
    try:
        with pytest.raises(GradingError, match="gave no reply within 1s"):
            asked.answer(3)
    finally:
        asked.close()


def test_python_is_the_interpreter_harnessdrive_runs_under() -> None:
    assert fill_words("{python}", {}) == sys.executable


def test_switches_compose() -> None:
    words, env = switched_off(
        ["tool", "--off={off}"], {"a": "OFF=a", "b": "OFF=b", "c": "--no-c"}, ["c", "b", "a"]
    )
    assert words == ["tool", "--off=a,b,c", "--no-c"]
    assert env == {"OFF": "a,b"}
    assert switched_off(["tool", "{off}"], {}, []) == (["tool", ""], {})
