"""The served oracle answers from a process of its own with memory, time and cache limits; a
case that breaks one is a bad request, and the next case is answered again."""

from __future__ import annotations

import http.client
import json
import os
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.demo import DEMO_SUITE
from harnessdrive.grading.differential.oracle import Oracle
from harnessdrive.grading.differential.oracle_process import OracleProcess, OracleRefused
from harnessdrive.grading.differential.service import (
    MAX_BODY,
    URL_VARIABLE,
    AgentRunWatch,
    agent_run_watch,
    oracle_server,
)
from harnessdrive.grading.differential.spec import OracleSpec
from harnessdrive.sandbox.runner import get_sandbox, sandbox_problem
from harnessdrive.tasks.loading import load_suite

ORACLE = """
def answer(case, off):
    if case == "hog":
        hoard = [bytearray(64 * 1024 * 1024) for _ in range(64)]
    if case == "loop":
        while True:
            pass
    if case == "bad":
        raise ValueError("no such case")
    if case == "big":
        return "x" * 100_000
    return {"echo": case}
"""


@pytest.fixture
def oracle(tmp_path: Path) -> Iterator[OracleProcess]:
    (tmp_path / "oracle.py").write_text(ORACLE)
    spec = OracleSpec(function="oracle.py:answer", answer_timeout=1.0)
    process = OracleProcess(tmp_path, spec, memory_mb=512)
    yield process
    process.close()


@pytest.fixture
def sandboxed_oracle(tmp_path: Path) -> Iterator[OracleProcess]:
    if sandbox_problem() is not None:
        pytest.skip("bubblewrap does not work here")
    (tmp_path / "oracle.py").write_text(ORACLE)
    spec = OracleSpec(function="oracle.py:answer", answer_timeout=5.0)
    process = OracleProcess(tmp_path, spec, memory_mb=512, sandbox=get_sandbox("bwrap"))
    yield process
    process.close()


def test_a_case_that_breaks_a_limit_is_refused_and_the_next_is_answered(
    oracle: OracleProcess,
) -> None:
    assert oracle.answer([1, 2]) == {"echo": [1, 2]}
    for breaking in ("hog", "loop"):
        with pytest.raises(OracleRefused):
            oracle.answer(breaking)
        assert oracle.answer(3) == {"echo": 3}
    assert oracle.starts == 3  # each broken process was replaced
    with pytest.raises(OracleRefused):
        oracle.answer("bad")  # the oracle's own refusal: the process lives on
    assert oracle.answer(4) == {"echo": 4}
    assert oracle.starts == 3


def test_the_cache_holds_a_bounded_number_of_bytes(tmp_path: Path) -> None:
    (tmp_path / "oracle.py").write_text(ORACLE)
    bounded = Oracle(tmp_path, OracleSpec(function="oracle.py:answer"), cache_bytes=250_000)
    for n in range(5):
        bounded.answer("big")
        bounded.answer(n)
    assert bounded._cached <= 250_000
    assert len(bounded._cache) < 10  # the oldest big answers went
    assert bounded.answer("big") == "x" * 100_000


def post(port: int, body: bytes, length: int | None = None) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Length": str(len(body) if length is None else length)}
    connection.request("POST", "/", body=body, headers=headers)
    status = connection.getresponse().status
    connection.close()
    return status


def test_the_server_answers_hostile_requests_with_a_bare_400_and_prints_nothing(
    oracle: OracleProcess, capfd: pytest.CaptureFixture[str]
) -> None:
    watch = AgentRunWatch()
    server = oracle_server(oracle, watch)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = int(server.server_address[1])
    try:
        assert post(port, b'"hello"') == 200
        assert post(port, b"[" * 100_000 + b"]" * 100_000) == 400  # nested past the bound
        assert post(port, b"9" * 5000) == 400  # an integer past the conversion limit
        assert post(port, b"x", length=MAX_BODY + 1) == 400
        assert post(port, json.dumps("hog").encode()) == 400
        assert post(port, json.dumps("loop").encode()) == 400
        assert post(port, b'"again"') == 200
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert watch.served == 2
    printed = capfd.readouterr()
    assert "Traceback" not in printed.err + printed.out


PRYING = """
import os


def answer(case, off):
    verb, path = case
    try:
        if verb == "read":
            with open(path) as f:
                return f.read()
        if verb == "list":
            return sorted(os.listdir(path))
        with open(path, "w") as f:
            f.write("left behind")
        return "written"
    except OSError as error:
        return f"denied: {type(error).__name__}"
"""


@pytest.mark.skipif(sandbox_problem() is not None, reason="bubblewrap does not work here")
def test_under_bwrap_the_served_oracle_sees_its_folder_and_a_private_tmp_alone(
    tmp_path: Path,
) -> None:
    task, results, beside = tmp_path / "task", tmp_path / "results", tmp_path / "beside"
    for folder in (task, results, beside):
        folder.mkdir()
    (task / "oracle.py").write_text(PRYING)
    (task / "data.txt").write_text("the oracle's own")
    (results / "secret.txt").write_text("for the driver only")
    (beside / "workspace.txt").write_text("the agent's")
    home = Path.home() / ".harnessdrive-oracle-test"
    sandbox = get_sandbox("bwrap", hidden=(results,), private=(Path.home(),))
    spec = OracleSpec(function="oracle.py:answer", answer_timeout=30.0)
    oracle = OracleProcess(task, spec, sandbox=sandbox)
    try:
        assert oracle.answer(["read", str(task / "data.txt")]) == "the oracle's own"
        for hidden in (results / "secret.txt", beside / "workspace.txt"):
            assert oracle.answer(["read", str(hidden)]).startswith("denied")
        assert oracle.answer(["write", "/tmp/scratch.txt"]) == "written"
        for outside in (task / "new.txt", results / "new.txt", home):
            assert oracle.answer(["write", str(outside)]).startswith("denied")
            assert not outside.exists()
        assert oracle.answer(["list", str(Path.home())]) != sorted(os.listdir(Path.home()))
    finally:
        oracle.close()
    assert not (task / "new.txt").exists()


def test_without_a_sandbox_the_oracle_is_a_plain_process_that_sees_the_host(
    tmp_path: Path,
) -> None:
    (tmp_path / "oracle.py").write_text(PRYING)
    (tmp_path / "beside.txt").write_text("visible")
    spec = OracleSpec(function="oracle.py:answer", answer_timeout=30.0)
    oracle = OracleProcess(tmp_path / ".", spec, sandbox=get_sandbox("none"))
    try:
        assert oracle.answer(["read", str(tmp_path / "beside.txt")]) == "visible"
    finally:
        oracle.close()


@pytest.mark.skipif(sandbox_problem() is not None, reason="bubblewrap does not work here")
def test_the_demo_tasks_served_oracle_answers_the_agents_run_from_the_sandbox(
    tmp_path: Path,
) -> None:
    [task] = [t for t in load_suite(DEMO_SUITE).tasks if t.spec.id == "skiplist"]
    # The suite is hidden from the run, as a run hides it; the oracle's own folder is shown.
    sandbox = get_sandbox("bwrap", hidden=(DEMO_SUITE, tmp_path))
    case = {"patterns": ["*.{LOG,md}"], "files": ["a.log", "b.md", "c.py"]}
    with agent_run_watch(task, sandbox) as watch:
        url = watch.env[URL_VARIABLE]
        request = urllib.request.Request(url, data=json.dumps(case).encode())
        with urllib.request.urlopen(request, timeout=60) as reply:
            assert json.loads(reply.read()) == ["a.log", "b.md"]
    assert watch.served == 1
    assert watch.problem is None


def test_under_bwrap_the_limits_still_hold(sandboxed_oracle: OracleProcess) -> None:
    assert sandboxed_oracle.answer([1]) == {"echo": [1]}
    for breaking in ("hog", "loop"):
        with pytest.raises(OracleRefused):
            sandboxed_oracle.answer(breaking)
        assert sandboxed_oracle.answer(2) == {"echo": 2}
    assert sandboxed_oracle.starts == 3
