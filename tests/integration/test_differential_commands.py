"""The command forms of a differential task: the oracle and the generator as commands, a
candidate command run once per case under the grading sandbox's containment, and an oracle
server of the task's own that serves the agent's run only."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from harnessdrive.grading.differential.casesets import generator, read_case_set
from harnessdrive.grading.differential.kind import grade_candidate
from harnessdrive.grading.differential.loading import task_callable
from harnessdrive.grading.differential.oracle import Oracle
from harnessdrive.grading.differential.service import URL_VARIABLE, agent_run_watch
from harnessdrive.grading.differential.spec import DifferentialGradeSpec
from harnessdrive.tasks.loading import Task, load_task
from tests.differential_tasks import TASK, command_task
from tests.sandboxes import sandbox_of

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("differential-commands")]

SOLUTION = (TASK / "solution" / "skiplist" / "rules.py").read_text()


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> Task:
    return load_task(command_task(tmp_path_factory.mktemp("commands") / "skiplist"))


def spec_of(task: Task) -> DifferentialGradeSpec:
    spec = task.spec.grade
    assert isinstance(spec, DifferentialGradeSpec)
    return spec


def test_the_oracle_and_generator_commands_answer_as_their_functions(task: Task) -> None:
    spec = spec_of(task)
    assert spec.oracle.command is not None and spec.generator.command is not None
    make = generator(task.folder, spec.generator)
    by_function = task_callable(TASK, "oracle/generate.py:make_case", "generator")
    answer = task_callable(TASK, "oracle/skiplist_oracle.py:answer", "oracle")
    oracle = Oracle(task.folder, spec.oracle)
    for index in (0, 5):
        case = make(index, 7, "hard")
        assert case == by_function(index, 7, "hard")
        # Each switch (two flags, one variable) turns its rule off, as the function's `off`.
        for off in ((), ("comments",), ("braces",), ("nocase",), ("braces", "nocase")):
            assert oracle.answer(case, off) == answer(case, frozenset(off)), (case, off)
    assert oracle.calls == 10


HOSTILE = """
import json, os, subprocess

from skiplist.rules import skipped

ANSWERS = {answers!r}
ORACLE = {oracle!r}
with open(0, encoding="utf-8") as stdin:
    case = json.load(stdin)
n = {numbers!r}.get(json.dumps(case, sort_keys=True))
if n == 1:
    while True:  # a hang: this case alone times out
        pass
if n == 2:
    os.write(1, b"[" + b" " * (8 << 20) + b"]")  # an answer over the cap
if n == 3 and os.fork() == 0:
    os.setsid()
    while True:  # a child left behind: it ends with the case's sandbox
        pass
if n == 4:
    try:
        open(ANSWERS).read()
        case = {{"patterns": [], "files": ["read the answers"]}}
    except OSError:
        pass
if n == 5:
    # By name (PATH is empty), or the oracle's own program (the task folder is not there).
    for argv in (["git", "--version"], ["/usr/bin/python3", ORACLE, "--no-braces"]):
        try:
            out = subprocess.run(argv, check=True, capture_output=True, timeout=5, input=b"{{}}")
            case = {{"patterns": [], "files": ["ran " + argv[0]]}}
        except (OSError, subprocess.SubprocessError):
            pass
if n == 6 and (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("PATH")):
    case = {{"patterns": [], "files": ["saw the environment"]}}
if n == 7:
    import socket
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
        case = {{"patterns": [], "files": ["reached the host"]}}
    except OSError:
        pass
print(json.dumps(skipped(case)))
"""


def test_a_candidate_command_runs_each_case_contained(
    task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "secret-of-the-host")
    listener = socket.create_server(("127.0.0.1", 0))
    spec = spec_of(task)
    cases = read_case_set(task.folder / spec.cases, spec).rows[:8]
    numbers = {json.dumps(row.input, sort_keys=True): n for n, row in enumerate(cases)}
    root = tmp_path / "repo"
    shutil.copytree(task.repo_path, root)
    (root / "skiplist" / "rules.py").write_text(SOLUTION)
    answers = str(task.folder / spec.cases)
    oracle = str(task.folder / "oracle" / "oracle_cli.py")
    port = listener.getsockname()[1]
    hostile = HOSTILE.format(answers=answers, oracle=oracle, numbers=numbers, port=port)
    (root / "skiplist_cli.py").write_text(hostile)
    quick = spec.model_copy(update={"case_timeout": 5.0, "minimise": False, "static": "report"})
    verdict = grade_candidate(
        quick,
        cases,
        task_folder=task.folder,
        root=root,
        work=tmp_path / "work",
        sandbox=sandbox_of("bwrap", hidden=(task.folder,)),
        python=sys.executable,
        logs=tmp_path,
    )
    rows = json.loads((tmp_path / "differential.json").read_text())["rows"]
    errors = {n: row["error"] for n, row in enumerate(rows) if not row["pass"]}
    listener.close()
    # The hang and the oversized answer cost their own cases; the child, the answer file, the
    # programs, the host's environment and its loopback were out of reach, so those cases
    # answered right.
    assert set(errors) == {1, 2}, errors
    assert errors[1].startswith("timeout") and errors[2].startswith("the answer was cut")
    assert verdict.metrics["workers"] == len(cases)  # one process per case
    # The static check read the command's Python: os and subprocess are not allowed.
    assert {f.path for f in verdict.findings} == {"skiplist_cli.py"}


def test_the_tasks_own_oracle_server_serves_the_agents_run_only(task: Task) -> None:
    served = task.folder / "oracle" / "served.jsonl"
    case = {"patterns": ["*.{LOG,md}"], "files": ["a.log", "b.md", "c.py"]}
    body = json.dumps(case).encode()
    with agent_run_watch(task) as watch:
        url = watch.env[URL_VARIABLE]
        with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=10) as reply:
            assert json.loads(reply.read()) == ["a.log", "b.md"]
        assert json.loads(served.read_text().splitlines()[-1]) == case
    assert watch.problem is None
    with pytest.raises(urllib.error.URLError):  # stopped with the run, before any grading
        urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=5)
    # One that dies under the agent makes the trial invalid.
    with agent_run_watch(task) as watch:
        port = int(watch.env[URL_VARIABLE].rsplit(":", 1)[1].strip("/"))
        pid = next(p for p in _listeners(port))
        os.kill(pid, signal.SIGKILL)
        _wait_dead(pid)
    assert watch.problem == "the oracle server died during the agent's run"


def _wait_dead(pid: int) -> None:
    """Until ``pid`` has died (a zombie its parent has not reaped yet, or gone)."""
    import time

    import psutil

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.01)
    pytest.fail(f"{pid} did not die")


def _listeners(port: int) -> list[int]:
    import psutil

    return [
        c.pid
        for c in psutil.net_connections("tcp")
        if c.status == "LISTEN" and c.laddr and c.laddr.port == port and c.pid
    ]


def test_a_server_that_never_listens_makes_the_trial_invalid(tmp_path: Path) -> None:
    folder = command_task(tmp_path / "skiplist", candidate_command=False)
    toml = folder / "task.toml"
    text = toml.read_text().replace(
        'server = ["python3", "-I", "-S", "oracle/serve.py", "{port}"]',
        'server = ["python3", "-c", "raise SystemExit(3)", "{port}"]',
    )
    toml.write_text(text)
    with agent_run_watch(load_task(folder)) as watch:
        pass
    assert watch.problem == "the oracle server exited 3 before listening"


def test_checks_oracle_wrapper_reaches_the_tasks_own_server(task: Task, tmp_path: Path) -> None:
    from harnessdrive.grading.differential.baselines import _wrapper

    spec = spec_of(task)
    cases = read_case_set(task.folder / spec.cases, spec).rows[:3]
    before = len((task.folder / "oracle" / "served.jsonl").read_text().splitlines())
    sandbox = sandbox_of("bwrap", hidden=(task.folder,))
    reachable, graded = _wrapper(task, spec, cases, sandbox, sys.executable, tmp_path)
    assert (reachable.score, graded.score) == (1.0, 0.0)
    served = (task.folder / "oracle" / "served.jsonl").read_text().splitlines()
    assert len(served) - before == len(cases)  # the task's server answered each case
