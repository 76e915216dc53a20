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
from harnessdrive.grading.differential.spec import DifferentialGradeSpec
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.tasks.loading import load_task

CANDIDATES = {
    "reference": "solution",
    "readme-only": "agents/readme-only",
    "naive": "agents/naive",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=800)
    parser.add_argument("--sandbox", default="auto", choices=("auto", "bwrap", "none"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hd-bench-diff-") as scratch:
        work = Path(scratch)
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
            examples = len(verdict.counterexamples)
            calls = metrics.get("minimiser_oracle_calls", 0.0)
            per_example = f"{calls / examples:.1f}" if examples else "-"
            print(
                f"{name:12} score {verdict.score:.3f}: {len(cases)} cases in {answered:.2f}s "
                f"= {len(cases) / answered:,.0f} cases/s; {examples} counterexamples, "
                f"{per_example} oracle calls each; grading {total:.1f}s in all"
            )


if __name__ == "__main__":
    main()
