"""Built-in agents and the command harness, through the real run driver."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import psutil
import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.cli.variants import resolve_variants
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, RunSummary, execute
from harnessdrive.sandbox.scratch_place import MEMORY_FOLDER, SCRATCH_VARIABLE, is_memory_backed
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks import load_suite
from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task


def run(
    suite_dir: Path,
    results: Path,
    names: list[str],
    commands: list[str] = (),
    timeout: float | None = None,
) -> RunSummary:
    suite = load_suite(suite_dir)
    variants = resolve_variants(suite, names, commands=list(commands))
    plan = make_plan(suite, variants, 1)
    return execute(plan, RunOptions(results=results, sandbox="none", agent_timeout=timeout))


def by_variant(summary: RunSummary) -> dict[str, TrialResult]:
    return {r.variant_label: r for r in summary.trials}


def test_crasher_is_crashed_and_graded_sleeper_times_out_and_is_graded(
    tmp_path: Path, results_dir: Path
) -> None:
    suite = write_suite(tmp_path, [add_task()])
    summary = run(suite, results_dir, ["crasher", "sleeper"], timeout=1.5)
    results = by_variant(summary)
    crasher, sleeper = results["crasher"], results["sleeper"]
    assert (crasher.status, crasher.outcome) == ("crashed", "fail")
    assert crasher.agent.exit_code == 3 and crasher.diff.files_changed == 1
    assert (sleeper.status, sleeper.outcome) == ("timeout", "fail")
    assert sleeper.seconds.agent >= 1.5  # not cut off before its deadline
    # The sleeper's background child went with it.
    strays = [
        p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", "86400"]
    ]
    assert strays == []


def test_command_harness_runs_a_cli_from_a_template(tmp_path: Path, results_dir: Path) -> None:
    suite = write_suite(tmp_path, [add_task()])
    fixer = (
        "test -f {prompt_file} && grep -q 'Make the tests pass' {prompt_file} && "
        "printf 'def add(a, b):\\n    return a + b\\n' > {workspace}/calc.py"
    )
    summary = run(suite, results_dir, [], commands=[f"fixer={fixer}", "idle=true"])
    results = by_variant(summary)
    assert (results["fixer"].status, results["fixer"].outcome) == ("completed", "pass")
    assert results["fixer"].cost.source == "unmeasured"
    assert (results["idle"].status, results["idle"].outcome) == ("completed", "fail")


def test_a_missing_program_could_not_run_and_its_other_trials_are_skipped(
    tmp_path: Path, results_dir: Path
) -> None:
    suite = write_suite(tmp_path, [add_task("a"), add_task("b")])
    summary = run(suite, results_dir, ["reference"], commands=["ghost=no-such-agent-cli -p x"])
    ghost = sorted((r for r in summary.trials if r.variant_label == "ghost"), key=lambda r: r.task)
    assert [r.status for r in ghost] == ["could_not_run", "skipped"]
    assert ghost[0].agent.hint is not None and "install" in ghost[0].agent.hint
    assert summary.skipped_harnesses == {"ghost": ghost[0].agent.hint}
    assert all(r.outcome == "pass" for r in summary.trials if r.variant_label == "reference")
    # Could-not-run trials that cost nothing are tried again by the next run.
    again = run(suite, results_dir, ["reference"], commands=["ghost=no-such-agent-cli -p x"])
    assert again.already_done == 2


def test_harnesses_and_doctor_list_every_builtin(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["harnesses"]) == 0
    out = capsys.readouterr().out
    for name in ("reference", "noop", "breaker", "tamperer", "crasher", "sleeper", "command"):
        assert name in out
    assert run_cli(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "git version" in out and "python" in out and "sandbox" in out


def test_built_in_agents_keep_their_scratch_in_memory_and_agent_clis_on_disk(
    tmp_path: Path, results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The built-in agents write known changes: their copies may live on a memory file system.
    # A command template runs someone else's program, which could fill memory: disk.
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.delenv(SCRATCH_VARIABLE, raising=False)
    system = Path(tempfile.gettempdir())
    assert not is_memory_backed(system), "this check needs a system temp dir on disk"
    suite = load_suite(write_suite(tmp_path, [add_task()]))
    kept = {}
    for label, names, commands in (("built-in", ["reference"], []), ("cli", [], ["idle=true"])):
        plan = make_plan(suite, resolve_variants(suite, names, commands=commands), 1)
        options = RunOptions(results=results_dir / label, sandbox="none", keep=True)
        summary = execute(plan, options)
        assert summary.kept is not None and summary.trials[0].status == "completed"
        kept[label] = summary.kept
    assert kept["built-in"].parent == MEMORY_FOLDER
    assert kept["cli"].parent == system
    for folder in kept.values():
        shutil.rmtree(folder)
