"""How fast the differential grader is: cases graded per second and the minimiser's oracle
calls per counterexample. Asserts nothing.

    python benchmarks/differential.py [--cases 800] [--sandbox auto]

Freezes a set of ``--cases`` cases of the demo's skiplist task (a copy of it, seed 11, the
``hard`` profile), then grades three pure-Python candidates on it in the grading sandbox: the
reference solution (every case passes, no minimising), and the readme-only and naive attempts
(their failing cases are shrunk, each to a 1-minimal counterexample). Prints, for each, the
cases graded per second (cases over the time to answer them, worker start included), the
counterexamples, and the minimiser's oracle calls per counterexample (answers are cached).
The seed's anchor ran one subprocess for all cases and called the reference on every try
(about 1 s per try).

First it times case builds of the same ``--cases`` cases: the oracle and generator as
functions, and as long-lived commands speaking the line protocol (``protocol = "lines"``).
Goals: the command build within 3x the function build, and the function build under 10 s.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from harnessdrive.demo import DEMO_SUITE
from harnessdrive.grading.differential.casesets import freeze_cases, read_case_set
from harnessdrive.grading.differential.kind import grade_candidate
from harnessdrive.grading.differential.results import counterexamples_in
from harnessdrive.grading.differential.spec import DifferentialGradeSpec
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.tasks.loading import load_task

CANDIDATES = {
    "reference": "solution",
    "readme-only": "agents/readme-only",
    "naive": "agents/naive",
}


LINES_ORACLE = """import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from skiplist_oracle import answer
for line in sys.stdin:
    asked = json.loads(line)
    sys.stdout.write(json.dumps({"answer": answer(asked["case"], frozenset(asked["off"]))}) + "\\n")
    sys.stdout.flush()
"""
LINES_GENERATOR = """import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate import make_case
for line in sys.stdin:
    asked = json.loads(line)
    case = make_case(asked["index"], asked["seed"], asked["profile"])
    sys.stdout.write(json.dumps({"case": case}) + "\\n")
    sys.stdout.flush()
"""
BUILD_GOAL_RATIO = 3.0
BUILD_GOAL_SECONDS = 10.0


def as_commands(folder: Path) -> None:
    """The task's oracle and generator as long-lived line-protocol commands."""
    (folder / "oracle" / "lines_oracle.py").write_text(LINES_ORACLE)
    (folder / "oracle" / "lines_generator.py").write_text(LINES_GENERATOR)
    toml = folder / "task.toml"
    text = toml.read_text()
    text = text.replace(
        'function = "oracle/skiplist_oracle.py:answer"',
        'command = "{python} -I oracle/lines_oracle.py"\nprotocol = "lines"',
    )
    text = text.replace(
        'function = "oracle/generate.py:make_case"',
        'command = "{python} -I oracle/lines_generator.py"\nprotocol = "lines"',
    )
    toml.write_text(text)


def timed_build(folder: Path, cases: int) -> tuple[float, int]:
    task = load_task(folder)
    spec = task.spec.grade
    assert isinstance(spec, DifferentialGradeSpec)
    per_rule = cases // (len(spec.oracle.rules) + 1)
    started = time.perf_counter()
    frozen = freeze_cases(
        folder,
        task.repo_path,
        spec,
        pool=per_rule * 12,
        per_rule=per_rule,
        seed=11,
        profile="hard",
    )
    return time.perf_counter() - started, frozen.cases


def build_lines(work: Path, cases: int) -> None:
    folders = {}
    for name in ("function", "command"):
        folders[name] = work / f"build-{name}" / "skiplist"
        shutil.copytree(DEMO_SUITE / "tasks" / "skiplist", folders[name])
    as_commands(folders["command"])
    as_function, made = timed_build(folders["function"], cases)
    as_command, _ = timed_build(folders["command"], cases)
    same = (folders["function"] / "cases" / "hidden.jsonl").read_bytes() == (
        folders["command"] / "cases" / "hidden.jsonl"
    ).read_bytes()
    ratio = as_command / as_function
    fast = "met" if as_function < BUILD_GOAL_SECONDS else "MISSED"
    near = "met" if ratio <= BUILD_GOAL_RATIO else "MISSED"
    print(
        f"case build, {made} cases: oracle and generator as functions {as_function:.2f}s "
        f"(goal under {BUILD_GOAL_SECONDS:g}s: {fast}); as line-protocol commands "
        f"{as_command:.2f}s = {ratio:.2f}x (goal {BUILD_GOAL_RATIO:g}x: {near}); same set: {same}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=800)
    parser.add_argument("--sandbox", default="auto", choices=("auto", "bwrap", "none"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hd-bench-diff-") as scratch:
        work = Path(scratch)
        build_lines(work, args.cases)
        folder = work / "skiplist"
        shutil.copytree(DEMO_SUITE / "tasks" / "skiplist", folder)
        task = load_task(folder)
        spec = task.spec.grade
        assert isinstance(spec, DifferentialGradeSpec)
        per_rule = args.cases // (len(spec.oracle.rules) + 1)
        started = time.perf_counter()
        freeze_cases(
            folder,
            task.repo_path,
            spec,
            pool=per_rule * 12,
            per_rule=per_rule,
            seed=11,
            profile="hard",
        )
        frozen = time.perf_counter() - started
        cases = read_case_set(folder / spec.cases, spec).rows
        print(f"froze {len(cases)} cases (pool {per_rule * 12}) in {frozen:.1f}s")
        sandbox = get_sandbox(args.sandbox, hidden=[folder])
        print(f"sandbox: {sandbox.name}")
        unlimited = spec.model_copy(update={"max_counterexamples": len(cases)})
        for name, overlay in CANDIDATES.items():
            root = work / name / "repo"
            shutil.copytree(task.repo_path, root)
            shutil.copytree(folder / overlay, root, dirs_exist_ok=True)
            started = time.perf_counter()
            verdict = grade_candidate(
                unlimited,
                cases,
                task_folder=folder,
                root=root,
                work=work / name / "work",
                sandbox=sandbox,
                python=sys.executable,
            )
            total = time.perf_counter() - started
            metrics = verdict.metrics
            answered = metrics["case_seconds"]
            examples = len(counterexamples_in(verdict.details))
            calls = metrics.get("minimiser_oracle_calls", 0.0)
            per_example = f"{calls / examples:.1f}" if examples else "-"
            print(
                f"{name:12} score {verdict.score:.3f}: {len(cases)} cases in {answered:.2f}s "
                f"= {len(cases) / answered:,.0f} cases/s; {examples} counterexamples, "
                f"{per_example} oracle calls each; grading {total:.1f}s in all"
            )


if __name__ == "__main__":
    main()
