"""A task's setup runs once per dependency state and its result is reused by every trial.

The setup below counts its runs in a file outside the copy (so these run with ``--sandbox
none``, except the bubblewrap one) and leaves a file that names the copy it ran in: the test
command passes only where that file names the copy the tests run in, so a state copied from the
prototype without its path rewritten fails.
"""

from __future__ import annotations

import json
from pathlib import Path

from harnessdrive.cli.variants import resolve_variants
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import TaskFiles, write_suite
from tests.sandboxes import require_bwrap

INSTALL = (
    "mkdir -p .deps && printf %s {workspace} > .deps/where && cat requirements.txt > .deps/pins"
)
CHECK = (
    'test "$(cat .deps/where)" = "$PWD" && test "$(cat .deps/pins)" = "$(cat requirements.txt)"'
    " && grep -q fixed calc.py"
)


def reuse_task(counter: Path | None, **extra: object) -> TaskFiles:
    setup = [INSTALL] if counter is None else [f"echo run >> {counter}", INSTALL]
    return TaskFiles(
        "deps",
        files={"calc.py": "broken\n", "requirements.txt": "one==1\n"},
        solution={"calc.py": "fixed\n"},
        setup=setup,
        command=CHECK,
        extra=dict(extra),
    )


def run(
    tmp_path: Path, task: TaskFiles, harnesses: list[str], commands: list[str], sandbox: str
) -> list[dict[str, object]]:
    suite = load_suite(write_suite(tmp_path / "suite", [task]))
    variants = resolve_variants(suite, harnesses, commands=commands)
    results = tmp_path / "results"
    options = RunOptions(results=results, sandbox=sandbox)  # type: ignore[arg-type]
    execute(make_plan(suite, variants, 2), options)
    return [json.loads(p.read_text()) for p in results.glob("trials/**/result.json")]


def runs(counter: Path) -> int:
    return len(counter.read_text().split()) if counter.exists() else 0


def test_setup_runs_once_for_every_trial_of_a_task(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    results = run(tmp_path, reuse_task(counter), ["reference", "noop"], [], "none")
    assert len(results) == 4
    outcomes = sorted((r["variant_label"], r["outcome"]) for r in results)
    assert outcomes == [("noop", "fail")] * 2 + [("reference", "pass")] * 2
    # Four workspaces and four grading copies, one setup run.
    assert runs(counter) == 1
    logs = list((tmp_path / "results").glob("trials/**/grade-setup.log"))
    assert logs and all("setup ran once" in log.read_text() for log in logs)


def test_a_change_to_a_dependency_file_runs_setup_again_for_that_trial(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    bump = "bump=printf 'two==2\\n' > requirements.txt && printf 'fixed\\n' > calc.py"
    results = run(tmp_path, reuse_task(counter), ["reference"], [bump], "none")
    assert {(r["variant_label"], r["outcome"]) for r in results} == {
        ("reference", "pass"),
        ("bump", "pass"),  # its own setup saw its own requirements.txt
    }
    # The shared run, then one grading setup for each of bump's two trials.
    assert runs(counter) == 3


def test_a_task_can_say_its_setup_runs_in_every_copy(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    task = reuse_task(counter, setup={"reuse": False})
    results = run(tmp_path, task, ["reference"], [], "none")
    assert {r["outcome"] for r in results} == {"pass"}
    assert runs(counter) == 4  # two trials: a workspace and a grading copy each


def test_a_setup_that_changes_a_file_of_the_base_is_not_reused(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    task = reuse_task(counter)
    task.setup = [*task.setup, "printf 'one==1\\n' > requirements.txt"]  # same bytes, new mtime
    results = run(tmp_path, task, ["reference"], [], "none")
    assert {r["outcome"] for r in results} == {"pass"}
    assert runs(counter) == 1 + 4  # the prototype, then every copy as before


def test_a_reused_setup_names_each_copy_under_bubblewrap(tmp_path: Path) -> None:
    require_bwrap()
    results = run(tmp_path, reuse_task(None), ["reference", "noop"], [], "bwrap")
    outcomes = sorted((r["variant_label"], r["outcome"]) for r in results)
    assert outcomes == [("noop", "fail")] * 2 + [("reference", "pass")] * 2
