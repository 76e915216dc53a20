"""Hostile candidates on the demo's differential task: each is contained and scored as the
rules say (acceptance 2 of the differential work). Graded in bubblewrap, as a trial is."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.demo import DEMO_SUITE
from harnessdrive.grading.differential.baselines import differential_baselines
from harnessdrive.grading.differential.casesets import CaseRow, read_case_set
from harnessdrive.grading.differential.execute import Candidate, run_cases
from harnessdrive.grading.differential.kind import grade_candidate
from harnessdrive.grading.differential.oracle import Oracle
from harnessdrive.grading.differential.service import AgentRunWatch, oracle_server
from harnessdrive.grading.differential.spec import DifferentialGradeSpec
from harnessdrive.grading.verdict import Verdict
from harnessdrive.sandbox.runner import Sandbox
from harnessdrive.tasks.loading import Task, load_task
from tests.sandboxes import sandbox_of

# One worker runs the module, so its shared fixtures are built once (tests/conftest.py).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("differential-containment")]

TASK_FOLDER = DEMO_SUITE / "tasks" / "skiplist"
CASES = 12
SOLUTION = (TASK_FOLDER / "solution" / "skiplist" / "rules.py").read_text()


@pytest.fixture(scope="module")
def task() -> Task:
    return load_task(TASK_FOLDER)


@pytest.fixture(scope="module")
def cases(task: Task) -> tuple[CaseRow, ...]:
    spec = task.spec.grade
    assert isinstance(spec, DifferentialGradeSpec)
    return read_case_set(task.folder / spec.cases, spec).rows[:CASES]


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    # As a run hides them: the suite and its task folders (oracle, frozen answers).
    return sandbox_of("bwrap", hidden=(DEMO_SUITE,))


def grade(
    tmp_path: Path,
    task: Task,
    cases: tuple[CaseRow, ...],
    sandbox: Sandbox,
    files: dict[str, str],
    logs: Path | None = None,
    **spec_changes: object,
) -> Verdict:
    root = tmp_path / "repo"
    shutil.copytree(task.repo_path, root)
    for rel, text in files.items():
        (root / rel).write_text(text)
    spec = task.spec.grade
    assert isinstance(spec, DifferentialGradeSpec)
    changed = spec.model_copy(update={"case_timeout": 1.0, "minimise": False, **spec_changes})
    return grade_candidate(
        changed,
        cases,
        task_folder=task.folder,
        root=root,
        work=tmp_path / "work",
        sandbox=sandbox,
        python=sys.executable,
        logs=logs,
    )


def test_the_solution_scores_every_case(tmp_path, task, cases, sandbox) -> None:
    verdict = grade(tmp_path, task, cases, sandbox, {"skiplist/rules.py": SOLUTION})
    assert (verdict.outcome, verdict.score, verdict.findings) == ("pass", 1.0, ())


SHELLS_OUT = f"""
import json, subprocess, sys

ORACLE = {str(TASK_FOLDER / "oracle")!r}
PROGRAM = "import json, sys; sys.path.insert(0, sys.argv[1]); import skiplist_oracle as o; " \\
    "print(json.dumps(o.answer(json.loads(sys.argv[2]))))"


def skipped(case):
    for binary in ("python3", {sys.executable!r}, "/usr/bin/python3"):
        try:
            out = subprocess.run([binary, "-c", PROGRAM, ORACLE, json.dumps(case)],
                                 capture_output=True, text=True, timeout=5)
        except OSError:
            continue
        if out.returncode == 0:
            return json.loads(out.stdout)
    raise RuntimeError("no oracle")
"""


def test_a_candidate_that_shells_out_to_the_oracle_gets_nothing(
    tmp_path, task, cases, sandbox
) -> None:
    # Even with the static check only reporting, the sandbox gives it no oracle to run.
    few = cases[:4]  # each try starts interpreters: a few cases show it
    verdict = grade(
        tmp_path, task, few, sandbox, {"skiplist/rules.py": SHELLS_OUT}, static="report"
    )
    assert verdict.score == 0.0 and verdict.outcome == "fail"
    assert any("subprocess" in f.detail for f in verdict.findings)


@pytest.fixture
def live_oracle(task: Task) -> Iterator[str]:
    """An oracle server left running by mistake: grading still must not reach it."""
    spec = task.spec.grade
    assert isinstance(spec, DifferentialGradeSpec)
    server = oracle_server(Oracle(task.folder, spec.oracle), AgentRunWatch())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join()


def test_the_starter_calling_the_oracle_scores_zero_even_with_one_listening(
    tmp_path, task, cases, sandbox, live_oracle
) -> None:
    starter = (task.repo_path / "skiplist" / "rules.py").read_text()
    calling = starter.replace('"http://127.0.0.1:9"', repr(live_oracle))
    verdict = grade(tmp_path, task, cases, sandbox, {"skiplist/rules.py": calling}, static="report")
    assert verdict.score == 0.0


READS_ANSWERS = f"""
import json

def skipped(case):
    with open({str(TASK_FOLDER / "cases" / "hidden.jsonl")!r}) as rows:
        for line in rows:
            row = json.loads(line)
            if row["input"] == case:
                return row["expected"]
    return []
"""


def test_a_candidate_that_reads_the_answer_file_cannot(tmp_path, task, cases, sandbox) -> None:
    verdict = grade(tmp_path, task, cases, sandbox, {"skiplist/rules.py": READS_ANSWERS})
    assert verdict.score == 0.0 and verdict.findings == ()  # open() is allowed; the file is not
    assert verdict.metrics["cases_passed"] == 0


INDIRECT = "from skiplist.helper import run\n\ndef skipped(case):\n    return run(case)\n"
HELPER_SYSTEM = "from os import system\n" + SOLUTION.replace("def skipped", "def run")
HELPER_CTYPES = "from . import deeper\n" + SOLUTION.replace("def skipped", "def run")


@pytest.mark.parametrize(
    ("helper", "offender", "what", "loads"),
    [
        ({"skiplist/helper.py": HELPER_SYSTEM}, "skiplist/helper.py", "os.system", True),
        (
            {"skiplist/helper.py": HELPER_CTYPES, "skiplist/deeper.py": "import ctypes\n"},
            "skiplist/deeper.py",
            "ctypes",
            False,  # refused at run time too: the candidate cannot even load
        ),
    ],
)
def test_a_forbidden_import_hidden_in_the_candidates_own_modules_is_found(
    tmp_path, task, cases, sandbox, helper, offender, what, loads
) -> None:
    files = {"skiplist/rules.py": INDIRECT, **helper}
    verdict = grade(tmp_path, task, cases, sandbox, files)
    static = [f for f in verdict.findings if not f.detail.startswith("at run time")]
    assert [(f.code, f.path) for f in static] == [("forbidden-import", offender)]
    assert what in static[0].detail
    # A forbidden import scores 0 unless the task only reports it, whatever it answers.
    assert (verdict.outcome, verdict.score) == ("fail", 0.0)
    assert verdict.metrics["pass_rate"] == (1.0 if loads else 0.0)


# Each reaches a forbidden module or call in a way no reading of the source can follow; the
# run-time guard refuses it where it happens, and the refusal is a finding.
DODGES = {
    "a computed name through a formatter": (
        "import string\n"
        "def skipped(case):\n"
        "    d = '_' * 2\n"
        "    g = string.Formatter().get_field('0.' + d + 'globals' + d, [skipped], {})[0]\n"
        "    g[d + 'builtins' + d][d + 'import' + d]('subprocess').run(['true'])\n"
        "    return []\n",
        "imports subprocess",
    ),
    "os.system through the builtins": (
        "import string\n"
        "def skipped(case):\n"
        "    d = '_' * 2\n"
        "    g = string.Formatter().get_field('0.' + d + 'globals' + d, [skipped], {})[0]\n"
        "    g[d + 'builtins' + d][d + 'import' + d]('os').system('true')\n"
        "    return []\n",
        "calls os.system",
    ),
    "a string run as code": (
        "import string\n"
        "def skipped(case):\n"
        "    d = '_' * 2\n"
        "    g = string.Formatter().get_field('0.' + d + 'globals' + d, [skipped], {})[0]\n"
        "    g[d + 'builtins' + d]['ex' + 'ec']('import ' + 'ctypes')\n"
        "    return []\n",
        "imports ctypes",
    ),
    "importlib, already loaded, asked for another module": (
        "import string\n"
        "def skipped(case):\n"
        "    d = '_' * 2\n"
        "    g = string.Formatter().get_field('0.' + d + 'globals' + d, [skipped], {})[0]\n"
        "    lib = g[d + 'builtins' + d][d + 'import' + d]('importlib')\n"
        "    lib.import_module('multi' + 'processing')\n"
        "    return []\n",
        "loads compiled code (marshal)",  # importlib raises no import event of its own
    ),
    "pickle by name": (
        "import string\n"
        "def skipped(case):\n"
        "    d = '_' * 2\n"
        "    g = string.Formatter().get_field('0.' + d + 'globals' + d, [skipped], {})[0]\n"
        "    g[d + 'builtins' + d][d + 'import' + d]('pick' + 'le')\n"
        "    return []\n",
        "imports pickle",
    ),
}


@pytest.mark.parametrize("name", sorted(DODGES))
def test_what_the_static_check_cannot_see_is_refused_at_run_time(
    tmp_path, task, cases, sandbox, name
) -> None:
    source, refused = DODGES[name]
    verdict = grade(tmp_path, task, cases[:3], sandbox, {"skiplist/rules.py": source})
    details = [f.detail for f in verdict.findings]
    assert f"at run time: {refused}" in details, details
    assert (verdict.outcome, verdict.score) == ("fail", 0.0)


def _on_one_case(cases: tuple[CaseRow, ...], action: str, imports: str = "") -> str:
    chosen = cases[3].input
    return (
        f"{imports}\n{SOLUTION}\n\n_real = skipped\n\ndef skipped(case):\n"
        f"    if case == {chosen!r}:\n        {action}\n    return _real(case)\n"
    )


def test_a_hang_on_one_case_costs_that_case_alone(tmp_path, task, cases, sandbox) -> None:
    hangs = _on_one_case(cases, "while True: pass")
    verdict = grade(tmp_path, task, cases, sandbox, {"skiplist/rules.py": hangs})
    assert verdict.metrics["cases_passed"] == CASES - 1
    assert verdict.score == pytest.approx((CASES - 1) / CASES)
    assert verdict.metrics["workers"] == 2  # restarted once, at the next case


def test_a_crash_on_one_case_costs_that_case_alone(tmp_path, task, cases, sandbox) -> None:
    crashes = _on_one_case(cases, "os._exit(7)", imports="import os")
    verdict = grade(tmp_path, task, cases, sandbox, {"skiplist/rules.py": crashes}, static="report")
    assert verdict.metrics["cases_passed"] == CASES - 1
    assert verdict.metrics["workers"] == 2


def test_hide_covers_a_host_binary_the_candidate_could_run(tmp_path, sandbox) -> None:
    git = shutil.which("git")
    assert git is not None
    root = tmp_path / "repo"
    root.mkdir()
    (root / "peek.py").write_text(
        "def look(path):\n    with open(path, 'rb') as f:\n        return f.read(4).hex()\n"
    )

    def peek(label: str, hide: tuple[Path, ...]) -> str:
        candidate = Candidate(
            sandbox=sandbox,
            python=sys.executable,
            root=root,
            module="peek",
            function="look",
            work=tmp_path / label,
            home=tmp_path,
            tmp=tmp_path,
            case_timeout=5,
            hide=hide,
        )
        (answer,) = run_cases(candidate, [git]).answers
        return str(answer.answer)

    assert peek("shown", ()) == "7f454c46"  # PATH="" alone leaves the binary there
    assert peek("hidden", (Path(git).resolve(),)) in ("", "None")  # empty, or not there at all


def test_check_baselines_hold_and_catch_a_rule_switch_that_does_nothing(tmp_path, sandbox):
    # One run on a copy whose oracle ignores the braces switch: that baseline must be caught,
    # and every other one still holds.
    broken = tmp_path / "skiplist"
    shutil.copytree(TASK_FOLDER, broken)
    oracle = broken / "oracle" / "skiplist_oracle.py"
    oracle.write_text(oracle.read_text().replace('"braces" not in off', "True"))
    found = differential_baselines(load_task(broken), sandbox=sandbox, python=sys.executable)
    assert [(b.name, b.ok) for b in found] == [
        ("oracle-wrapper, oracle reachable", True),
        ("oracle-wrapper, as graded", True),
        ("rule comments off, on its bucket", True),
        ("rule braces off, on its bucket", False),
        ("rule nocase off, on its bucket", True),
    ]  # the starter and the naive attempt are check's trials (the next test)
    assert found[3].score == 1.0 and found[0].score == 1.0 and found[1].score == 0.0


def test_check_json_carries_the_baselines_check_reports(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where check keeps its logs
    monkeypatch.setattr(tempfile, "tempdir", None)
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "suite.toml").write_text('name = "one"\ntasks = ["tasks/*"]\n')
    shutil.copytree(TASK_FOLDER, suite / "tasks" / "skiplist")
    capsys.readouterr()
    from harnessdrive.cli.app import run_cli

    assert run_cli(["check", str(suite), "--json", "--sandbox", "bwrap", "--keep-logs"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True
    found = {(b["task"], b["baseline"]): (b["expected"], b["ok"]) for b in report["baselines"]}
    assert found == {
        ("skiplist", "oracle-wrapper, oracle reachable"): ("100%", True),
        ("skiplist", "oracle-wrapper, as graded"): ("0%", True),
        ("skiplist", "rule comments off, on its bucket"): ("0%", True),
        ("skiplist", "rule braces off, on its bucket"): ("0%", True),
        ("skiplist", "rule nocase off, on its bucket"): ("0%", True),
        ("skiplist", "starter"): ("0%", True),
        ("skiplist", "naive"): ("at most 50%", True),
    }
    scores = {b["baseline"]: b["score"] for b in report["baselines"]}
    assert scores["oracle-wrapper, oracle reachable"] == 1.0 and scores["starter"] == 0.0
    # The naive attempt was a trial like any case: played by the naive agent, graded, recorded.
    (logs,) = tmp_path.glob("harnessdrive-check-logs-*")
    naive = logs / "skiplist" / "baseline-naive"
    assert "skiplist/rules.py" in (naive / "diff.patch").read_text()
    rows = json.loads((naive / "differential.json").read_text())["rows"]
    assert scores["naive"] == sum(row["pass"] for row in rows) / len(rows) < 0.5


# Reaches the worker's own results file (its path is in sys.argv) and writes the lines the
# supervisor reads: a case start repeated, and answers to no waiting case, to keep a hang alive.
KEEPS_ALIVE = """
import string, time

def skipped(case):
    d = "_" * 2
    g = string.Formatter().get_field("0." + d + "globals" + d, [skipped], {})[0]
    sys = g[d + "builtins" + d][d + "import" + d]("sys")
    with open(sys.argv[5], "a") as results:
        while True:
            results.write('B 0\\nR {"i": 999, "answer": []}\\n')
            results.flush()
            time.sleep(0.05)
"""


def test_a_hang_cannot_keep_itself_alive_by_writing_the_workers_lines(
    tmp_path, task, cases, sandbox
) -> None:
    verdict = grade(
        tmp_path, task, cases[:2], sandbox, {"skiplist/rules.py": KEEPS_ALIVE}, static="report"
    )
    assert verdict.metrics["cases_passed"] == 0
    assert verdict.metrics["workers"] == 2  # each case timed out, each in a worker of its own


HUGE_OR_FORKS = (
    SOLUTION
    + """
_real = skipped
_calls = []

def skipped(case):
    _calls.append(case)
    if len(_calls) == 1:
        return "x" * (9 << 20)  # an answer over the cap
    from os import fork
    fork()
    return _real(case)
"""
)


def test_a_huge_answer_fails_its_case_and_a_fork_is_refused(tmp_path, task, cases, sandbox) -> None:
    few = cases[:4]
    verdict = grade(
        tmp_path,
        task,
        few,
        sandbox,
        {"skiplist/rules.py": HUGE_OR_FORKS},
        tmp_path,
        static="report",
    )
    rows = json.loads((tmp_path / "differential.json").read_text())["rows"]
    assert rows[0]["error"] == f"the answer is over {8 << 20} bytes"
    assert all(row["error"].startswith("PermissionError") for row in rows[1:]), rows
    details = [f.detail for f in verdict.findings]
    assert "at run time: calls os.fork" in details, details
    assert verdict.metrics["workers"] == 1  # neither one took the worker down
