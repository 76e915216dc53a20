"""One grading command in a grading copy: rendered, launched in the copy's sandbox, counted.

Counts come from a junit report written outside the copy where the runner can write one (and the
kind asks for it), else from the exit status alone.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from harnessdrive.errors import GradingError
from harnessdrive.grading.bytecode import fresh_bytecode
from harnessdrive.grading.guarded import launcher_module, own_modules, prepare_run, read_counts
from harnessdrive.grading.verdict import Finding, GradingRun, StreamKept
from harnessdrive.grading.witness import WitnessPlan, write_canaries
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.commands import placeholders, render, shell_argv
from harnessdrive.sandbox.runner import Isolation

if TYPE_CHECKING:
    from harnessdrive.grading.kinds.base import GradingCopy

_PYTEST = re.compile(r"(^|[\s/;&|(])(py\.?test|-m\s+pytest)\b")


def run_command(
    copy: GradingCopy,
    template: str,
    label: str,
    *,
    timeout: float,
    junit: bool,
    plan: WitnessPlan | None = None,
    isolation: Isolation | None = None,
    stderr_apart: bool = False,
    stdin: Path | None = None,
    record_as: str | None = None,
) -> tuple[GradingRun, tuple[Finding, ...]]:
    """Run ``template`` in ``copy``, logged to ``grade-<label>.log``; with ``junit``, its counts
    come from the report the runner writes to ``copy.outputs`` (judged against ``plan``'s
    canaries); with ``stderr_apart``, its stderr goes to ``grade-<label>.stderr.log``;
    ``record_as``: the label its log and kept report are named by instead (the run itself
    sees ``label`` only). Raises :class:`GradingError` when stopped."""
    setup = copy.setup
    junit_path = copy.outputs / f"junit-{label}.xml"
    junit_path.unlink(missing_ok=True)
    recorded_junit = setup.logs / f"junit-{record_as or label}.xml"
    recorded_junit.unlink(missing_ok=True)
    log = setup.logs / f"grade-{record_as or label}.log"
    values = {**copy.values, "junit": str(junit_path)}
    command = render(template, values)
    prepared = prepare_run(
        command,
        copy.scratch,
        python=setup.python,
        junit=junit_path,
        copy=copy.root,
        own=own_modules(setup.snapshot.root),
    )
    wants_junit = junit and (
        "junit" in placeholders(template) or _PYTEST.search(command) or prepared.writes_junit
    )
    run_env = {**copy.env, **prepared.env}
    # Bytecode from an earlier run must never stand in for a rewritten file (seed 000): the
    # copy's own __pycache__ folders are replaced by bytecode checked against each file's hash.
    # What lies outside the copy (the interpreter, shared environments) is read-only to every
    # command and keeps its bytecode.
    checked = "check-hash-based-pycs" not in command  # "never" would trust it unchecked
    bytecode = functools.partial(
        fresh_bytecode,
        copy.root,
        prepared.interpreters if checked else (),
        path=run_env.get("PATH", os.defpath),
        pytest=prepared.runner == "pytest",
        ours=(launcher_module(copy.scratch),),
    )
    if wants_junit and "junit" not in placeholders(template):
        run_env["PYTEST_ADDOPTS"] = (
            f"--junitxml={junit_path} -o junit_family=xunit2 -p no:cacheprovider"
        )
    with log.open("wb") as handle:
        handle.write(f"$ {command}\n# run as: {prepared.command}\n".encode())
    result = setup.sandbox.run(
        shell_argv(prepared.command),
        cwd=copy.root,
        env=run_env,
        timeout=timeout,
        stdout=log,
        stderr=log.with_suffix(".stderr.log") if stderr_apart else log,
        isolation=isolation or copy.isolation,
        stdin=stdin,
        stop=setup.stop,
        meanwhile=bytecode,  # while the sandbox is built
    )
    if result.stopped:
        raise GradingError(f"stopped while running the {label} command")
    if plan is not None and plan.canaries:
        _name_the_canaries(log, plan)
    limit_note = f"stopped at the {result.limit.replace('_', ' ')} limit" if result.limit else None
    base = {
        "command": command,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "seconds": round(result.seconds, 3),
        "output": StreamKept.of(result.stdout_record),
        "started": round((result.began or now()) - copy.began, 3),
    }
    if wants_junit:
        if junit_path.is_file() and not junit_path.is_symlink():
            keep_report(junit_path, recorded_junit)
            if plan is not None:
                write_canaries(recorded_junit, plan)
            return read_counts(
                junit_path,
                base,
                prepared=prepared,
                plan=plan,
                copy=copy.root,
                note=limit_note,
            )
        note = limit_note or "no junit report was written, so the run cannot count as passed"
        return GradingRun(**base, passed=0, total=0, source="junit", note=note), ()
    passed = int(result.ok)
    return GradingRun(
        **base, passed=passed, total=1, failed=1 - passed, source="exit_code", note=limit_note
    ), ()


def _name_the_canaries(log: Path, plan: WitnessPlan) -> None:
    """Say in the log, once the run is over, which of its tests we planted: a reader would
    take their FAILED lines for the task's."""
    failing = [c.name for c in plan.canaries if not c.must_pass]
    passing = [c.name for c in plan.canaries if c.must_pass]
    said = [f"{', '.join(failing)} (planted to fail)"] if failing else []
    said += [f"{', '.join(passing)} (planted to pass)"] if passing else []
    with log.open("ab") as handle:
        handle.write(
            f"\n# harnessdrive planted tests of known outcome in the hidden files, to see that"
            f" they really ran: {'; '.join(said)}. They are not counted.\n".encode()
        )


KEPT_REPORT_BYTES = 4 * 1024 * 1024
"""The most of a report the results folder keeps: whole up to this, else its head."""


def keep_report(report: Path, kept: Path) -> None:
    """Copy ``report`` (written by the code under test) to the results folder, bounded: a larger
    one keeps its first :data:`KEPT_REPORT_BYTES` and a comment saying it was cut, so the trial
    folder stays small whatever the tests wrote. Counts are read from ``report`` itself."""
    size = report.stat().st_size
    if size <= KEPT_REPORT_BYTES:
        shutil.copyfile(report, kept)
        return
    with report.open("rb") as source, kept.open("wb") as target:
        target.write(source.read(KEPT_REPORT_BYTES))
        target.write(
            f"\n<!-- harnessdrive: report cut here; {size} bytes were written, the first"
            f" {KEPT_REPORT_BYTES} are kept -->\n".encode()
        )
