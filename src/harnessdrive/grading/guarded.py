"""Glue between the grader and the runner launcher and witness: what one grading command needs.

``plant_canaries`` writes the canaries into the hidden files as they are injected;
``prepare_run`` rewrites a command so its runner comes from the environment; ``read_counts``
turns the junit report into a :class:`GradingRun`, judged against the canaries.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import AgentDataError
from harnessdrive.grading import reference_outcomes, runners, witness
from harnessdrive.grading.junit import count_cases, read_cases
from harnessdrive.grading.verdict import Finding, GradingRun
from harnessdrive.sandbox.commands import render
from harnessdrive.tasks.loading import Task

RUNNER_FOLDER = "grading-runner"


@dataclass(frozen=True)
class Canaries:
    plan: witness.WitnessPlan | None
    contents: dict[str, bytes]
    """Hidden file targets with their content, canaries added."""


def plant_canaries(
    task: Task,
    values: dict[str, str],
    *,
    command: str,
    junit: bool,
    rng: random.Random | None = None,
) -> Canaries:
    """Canaries for the hidden test files, when the test ``command`` starts one runner we know
    and its counts come from a junit report."""
    hidden = [(item.target, item.source.read_bytes()) for item in task.hidden]
    runner = runners.witnessable(render(command, {**values, "junit": "junit.xml"}))
    if runner is None or not junit:
        return Canaries(None, dict(hidden))
    plan, planted = witness.plant(runner, hidden, rng)
    if not plan.canaries:
        return Canaries(None, dict(hidden))
    plan = dataclasses.replace(plan, reference=reference_outcomes.fresh(task))
    return Canaries(plan, {**dict(hidden), **planted})


def own_modules(snapshot_root: Path) -> tuple[str, ...]:
    """Top-level module names the base itself defines at the root and one folder down.

    The launcher's guard leaves these alone: a project's own ``calendar`` package is its code.
    A snapshot never changes once built, so the answer is remembered per snapshot folder (a
    folder made again at the same path has another inode or time).
    """
    try:
        info = snapshot_root.stat()
    except OSError:
        return ()
    return _own_modules(str(snapshot_root), info.st_ino, info.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _own_modules(root: str, _inode: int, _mtime_ns: int) -> tuple[str, ...]:
    snapshot_root = Path(root)
    names: set[str] = set()
    try:
        folders = [snapshot_root] + [
            p for p in snapshot_root.iterdir() if p.is_dir() and not p.name.startswith(".")
        ]
    except OSError:
        return ()
    for folder in folders:
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".py") and entry.is_file():
                names.add(entry.name[:-3])
            elif (entry / "__init__.py").is_file():
                names.add(entry.name)
    return tuple(sorted(names))


def install_launcher(scratch: Path) -> Path:
    """The read-only folder the sandbox shows, holding the launcher."""
    runners.install_launcher(scratch / RUNNER_FOLDER)
    return scratch / RUNNER_FOLDER


def launcher_module(scratch: Path) -> Path:
    """The launcher's module, which gets bytecode like the copy's own (grading/bytecode.py)."""
    return scratch / RUNNER_FOLDER / runners.LAUNCHER_MODULE


def prepare_run(
    command: str, scratch: Path, *, python: str, junit: Path, copy: Path, own: tuple[str, ...]
) -> runners.PreparedCommand:
    return runners.prepare(
        command,
        launcher=scratch / RUNNER_FOLDER / runners.LAUNCHER,
        python=python,
        junit=junit,
        copy=copy,
        own_modules=own,
        run_all=True,
    )


def read_counts(
    junit: Path,
    base: Mapping[str, object],
    *,
    prepared: runners.PreparedCommand,
    plan: witness.WitnessPlan | None,
    copy: Path,
    note: str | None,
) -> tuple[GradingRun, tuple[Finding, ...]]:
    """The run's counts from its junit report, canaries taken out and judged."""
    fields: dict[str, object] = {**base, "source": "junit", "note": note}
    try:
        cases = read_cases(junit)
    except AgentDataError as exc:
        # The report is written beside the code under test: garbage in it is no pass.
        fields.update(passed=0, total=0, note="; ".join(filter(None, (note, str(exc)))))
        return GradingRun.model_validate(fields), ()
    findings: tuple[Finding, ...] = ()
    if plan is None:
        counts = count_cases(cases)
    else:
        exit_code = base.get("exit_code")
        judged = witness.judge(
            plan,
            cases,
            exit_code=exit_code if isinstance(exit_code, int) else None,
            copy=copy,
            selects=prepared.selects,
            passes_status=prepared.passes_status,
        )
        counts, findings = judged.counts, judged.findings
        if judged.note:
            fields["note"] = "; ".join(filter(None, (note, judged.note)))
        fields["canaries"] = judged.canaries
        fields["expected_exit"] = judged.expected_exit if prepared.passes_status else 0
        fields["hidden_outcomes"] = judged.outcomes
    fields.update(
        passed=counts.passed,
        total=counts.total,
        failed=counts.failed,
        errors=counts.errors,
        skipped=counts.skipped,
    )
    return GradingRun.model_validate(fields), findings
