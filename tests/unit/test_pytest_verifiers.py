"""Every bundled verifier passes on a run that did the right thing and fails, with a message
saying what the agent did, on one that did not; one that cannot tell raises CannotEvaluate.

The two runs are stored trials written the way the store writes them (result.json,
transcript.json, diff.patch, prompt.md, the session log) with a final workspace beside them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import harnessdrive.pytest_plugin as plugin
from harnessdrive.grading.verdict import Finding, GradingRun, Verdict
from harnessdrive.pytest_plugin import CannotEvaluate, CaseOutput
from harnessdrive.pytest_plugin.matrix import Cell
from harnessdrive.pytest_plugin.skills import Skill, SkillCoverage, coverage
from harnessdrive.store.result_cost import PriceUsed
from harnessdrive.store.results import (
    AgentSummary,
    Cost,
    DiffStats,
    RoundRecord,
    Timing,
    Totals,
    TrialResult,
)
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Event, ModelCall, Transcript, Usage
from harnessdrive.workspace.changes import PATCH_CUT_MARK

GOOD_DIFF = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
-    return a - b
+    return a + b
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-old
"""
BAD_DIFF = """\
diff --git a/calc.py b/calc.py
deleted file mode 100644
--- a/calc.py
+++ /dev/null
@@ -1,2 +0,0 @@
-def add(a, b):
-    return a - b
diff --git a/tests/test_calc.py b/tests/test_calc.py
new file mode 100644
--- /dev/null
+++ b/tests/test_calc.py
@@ -0,0 +1 @@
+def test_nothing(): pass
"""
LICENSE = "# Copyright the authors.\n# Licensed under the MIT licence.\n"


def _visible(failed: int) -> GradingRun:
    return GradingRun(
        command="pytest -q",
        exit_code=1 if failed else 0,
        timed_out=False,
        seconds=1.0,
        passed=3 - failed,
        total=3,
        failed=failed,
        source="junit",
    )


def stored_run(folder: Path, good: bool) -> CaseOutput:
    folder.mkdir(parents=True)
    workspace = folder / "workspace"
    workspace.mkdir()
    calls = (
        ModelCall(model="m", usage=Usage(input=100, cache_read=900, output=50)),
        ModelCall(model="m", usage=Usage(input=50, cache_read=1500, output=40)),
    )
    if good:
        (workspace / "calc.py").write_text(LICENSE + "def add(a, b):\n    return a + b\n")
        events = (
            Event(kind="tool_call", text="Bash"),
            Event(kind="tool_call", text="Task"),
            Event(kind="command", text="pytest -q", data={"exit_code": 0}),
            Event(kind="command", text="sh .claude/skills/greet/scripts/hello.sh"),
            Event(kind="file_change", text="calc.py"),
        )
        helper = ModelCall(model="m", usage=Usage(input=10, output=5), agent="agent-a1")
        transcript = Transcript(
            events=events,
            calls=(*calls, helper),
            session_id="s1",
            session_log="session-s1.jsonl",
            turns=3,
            tool_calls=2,
            final_message="Done: add() now adds; all tests pass.",
        )
        (folder / "session-s1.jsonl").write_text('{"type": "assistant"}\n')
        (folder / "prompt.md").write_text("/greet say hello")
        agent = AgentSummary(exit_code=0, turns=3, tool_calls=2, calls=2, usage=transcript.usage)
        diff = DiffStats(
            files_changed=2, lines_added=1, lines_deleted=2, paths=("calc.py", "old.txt")
        )
        grading = Verdict(outcome="pass", visible=_visible(0))
        status, cost_usd, seconds = "completed", 0.0123, 40.0
    else:
        (workspace / "calc.py").write_text(
            "# reformatted licence\ndef add(a, b):\n    return a - b\n"
        )
        events = (
            Event(kind="tool_call", text="WebFetch"),
            Event(kind="command", text="git push --force", data={"exit_code": 1}),
            Event(kind="error", text="API error 529: overloaded"),
            Event(kind="note", text="permission denied: WebFetch"),
            Event(kind="note", text="context compacted (auto)", data={"compaction": "auto"}),
            Event(kind="note", text="context compacted (auto)", data={"compaction": "auto"}),
        )
        helper = ModelCall(model="m", usage=Usage(input=1_200, output=30), agent="agent-b1")
        transcript = Transcript(
            events=events,
            calls=(*calls * 20, helper),
            session_id="s2",
            session_log="session-s2.jsonl",  # named, but not kept
            turns=40,
            tool_calls=60,
            permission_denials=1,
            final_message="I could not finish.",
        )
        (folder / "prompt.md").write_text("say hello")
        agent = AgentSummary(
            exit_code=1,
            error="overloaded",
            turns=40,
            tool_calls=60,
            calls=40,
            usage=transcript.usage,
            permission_denials=1,
        )
        diff = DiffStats(
            files_changed=2, lines_added=1, lines_deleted=2, paths=("calc.py", "tests/test_calc.py")
        )
        grading = Verdict(
            outcome="fail",
            visible=_visible(2),
            findings=(Finding(code="protected-path", path="tests/test_calc.py"),),
        )
        status, cost_usd, seconds = "timeout", 3.5, 900.0
    (folder / "diff.patch").write_text(GOOD_DIFF if good else BAD_DIFF)
    (folder / "transcript.json").write_text(transcript.model_dump_json())
    record = RoundRecord(
        status=status, outcome=grading.outcome, agent=agent, diff=diff, grading=grading
    )
    price = PriceUsed(record="scripted/m@2026-01-01", source="test prices")
    cost = Cost(usd=cost_usd, source="computed", charged_usd=cost_usd, prices=(price,))
    variant = VariantSpec(harness="claude", model="m", name="claude_m")
    result = TrialResult(
        trial_id="t1" if good else "t2",
        suite="pytest-evals",
        task="add",
        task_fingerprint="f",
        variant=variant,
        variant_label="claude_m",
        harness="claude",
        repetition=1,
        status=status,
        outcome=grading.outcome,
        started="2026-12-01T10:00:00Z",
        finished="2026-12-01T10:01:00Z",
        seconds=Timing(agent=seconds, total=seconds),
        rounds=(record,),
        totals=Totals.over((record,)),
        cost=cost,
    )
    skill = SkillCoverage(
        dialect="claude",
        installed_at=".claude/skills/greet",
        loaded=("SKILL.md", "scripts/hello.sh") if good else ("SKILL.md",),
        not_loaded=() if good else ("scripts/hello.sh",),
        ran=("scripts/hello.sh",) if good else (),
        not_run=() if good else ("scripts/hello.sh",),
        loaded_bytes=1_200 if good else 48_000,
    )
    cell = Cell(variant=variant, treatment=None, repetition=1, repeats=1, base="claude/m")
    return CaseOutput(cell=cell, result=result, folder=folder, workspace=workspace, skill=skill)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CaseOutput]:
    root = tmp_path_factory.mktemp("verifiers")
    return {"good": stored_run(root / "good", True), "bad": stored_run(root / "bad", False)}


Check = Callable[..., None]
# (verifier, its arguments, a phrase its failure on the bad run must hold)
CASES: list[tuple[Check, tuple[Any, ...], dict[str, Any], str]] = [
    (plugin.check_rollout, (), {}, "the trial timeout, not completed"),
    (plugin.check_run_is_real, (), {}, "not completed"),
    (plugin.check_run_is_priced, (), {}, ""),  # both are priced: see the separate test
    (plugin.check_exit_clean, (), {}, "the agent exited 1: overloaded"),
    (plugin.check_not_timed_out, (), {}, "ended by timeout after 900s"),
    (plugin.check_no_permission_denials, (), {}, "permission denied: WebFetch"),
    (plugin.check_no_errors, (), {}, "API error 529"),
    (plugin.check_files_written, ("calc.py", "old.txt"), {}, "not written by this run: old.txt"),
    (plugin.check_file_unchanged, ("README.md",), {}, ""),
    (plugin.check_no_files_added, (), {}, "added files: tests/test_calc.py"),
    (plugin.check_files_deleted, ("old.txt",), {}, "not deleted: old.txt (it deleted calc.py)"),
    (plugin.check_no_files_deleted, (), {"allow": ["old.*"]}, "deleted files: calc.py"),
    (plugin.check_changes_within, ("calc.py", "old.txt"), {}, "changed outside"),
    (plugin.check_diff_within, (3,), {}, ""),
    (plugin.check_file_contains, ("calc.py", "a + b"), {}, "calc.py lacks 'a + b'"),
    (plugin.check_file_lacks, ("calc.py", "a - b"), {}, "calc.py still holds 'a - b'"),
    (plugin.check_file_matches, ("calc.py", r"^\s+return a \+ b$"), {}, "has no match"),
    (plugin.check_block_preserved, ("calc.py", LICENSE), {}, "the preserved block is gone"),
    (plugin.check_tools_used, ("Bash",), {}, "tools not used: Bash (it called WebFetch×1)"),
    (plugin.check_tools_not_used, ("WebFetch",), {}, "called WebFetch"),
    (plugin.check_commands_ran, ("pytest",), {}, "never ran pytest (ran: git push --force)"),
    (plugin.check_commands_not_run, ("git push",), {}, "ran git push --force"),
    (plugin.check_turns_within, (10,), {"least": 2}, "40 turns, not within [2, 10]"),
    (plugin.check_tool_calls_within, (10,), {}, "60 tool calls, not within [0, 10]"),
    (plugin.check_subagents_spawned, (), {}, "0 subagent(s) spawned"),
    (plugin.check_cost_within, (0.5,), {}, "cost $3.5000 > $0.5000"),
    (plugin.check_tokens_within, (10_000,), {}, "tokens billed > 10,000"),
    (plugin.check_seconds_within, (300,), {}, "the agent took 900.0s > 300s"),
    (plugin.check_peak_context_within, (1_600,), {}, ""),
    (plugin.check_cache_reused, (0.8,), {}, ""),
    (plugin.check_compactions_within, (0,), {}, "context compacted 2 time(s), not within [0, 0]"),
    (
        plugin.check_long_context_calls_within,
        (1,),
        {"above": 1_500},
        "20 call(s) read over 1,500 prompt tokens (largest 1,550), more than 1",
    ),
    (
        plugin.check_subagent_spend_within,
        (),
        {"most_tokens": 100},
        "all subagents billed 1,230 tokens > 100",
    ),
    (plugin.check_skill_invoked, (), {}, "the transcript shows no use of the skill 'greet'"),
    (plugin.check_skill_was_loaded, ("scripts/hello.sh",), {}, "(loaded: SKILL.md)"),
    (plugin.check_skill_scripts_ran, (), {}, "skill scripts not run: scripts/hello.sh"),
    (
        plugin.check_skill_context_within,
        (4_000,),
        {},
        "the skill's loaded files come to 48,000 bytes > 4,000 (SKILL.md)",
    ),
    (plugin.check_hidden_tests_passed, (), {}, "the task's grader says fail"),
    (plugin.check_visible_tests_passed, (), {}, "visible tests: 1/3 passed"),
    (plugin.check_no_tampering, (), {}, "protected-path: tests/test_calc.py"),
    (plugin.check_final_message_contains, ("tests pass",), {}, "lacks 'tests pass'"),
    (
        plugin.check_all,
        (plugin.check_exit_clean, plugin.check_no_errors),
        {},
        "2 of 2 checks failed: the agent exited 1: overloaded; 1 error(s)",
    ),
    (plugin.check_content_preserved, ("calc.py",), {"at_least": 0.7}, "calc.py kept 60% of its 5"),
    (plugin.check_tool_under_test, ("Bash",), {}, "Bash was called 0 time(s)"),
]
NEUTRAL = {
    # Runs that differ only elsewhere: the bad run passes these too.
    "check_run_is_priced",
    "check_file_unchanged",
    "check_diff_within",
    "check_peak_context_within",
    "check_cache_reused",
}


def test_every_bundled_verifier_is_covered() -> None:
    bundled = {name for name in plugin.__all__ if name.startswith("check_")} - {"check_golden"}
    assert bundled == {check.__name__ for check, *_ in CASES} | {"check_grader_failed"}
    assert len(bundled) == 45


@pytest.mark.parametrize(
    ("check", "args", "kwargs", "message"), CASES, ids=lambda v: getattr(v, "__name__", "")
)
def test_a_verifier_passes_the_good_run_and_fails_the_bad_one(
    runs: dict[str, CaseOutput],
    check: Check,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    message: str,
) -> None:
    check(runs["good"], *args, **kwargs)
    if check.__name__ in NEUTRAL:
        return
    with pytest.raises(AssertionError) as failed:
        check(runs["bad"], *args, **kwargs)
    text = str(failed.value)
    assert text.startswith("claude/m: ") and message in text, text
    assert "\n" not in text


def test_the_bad_runs_the_neutral_checks_tell_apart(runs: dict[str, CaseOutput]) -> None:
    good, bad = runs["good"], runs["bad"]
    with pytest.raises(AssertionError, match=r"changed: calc\.py"):
        plugin.check_file_unchanged(good, "calc.py")
    with pytest.raises(AssertionError, match=r"the change is 3 lines \(\+1 -2\), more than 2"):
        plugin.check_diff_within(bad, 2)
    with pytest.raises(AssertionError, match="a call read 1,550 prompt tokens > 1,000"):
        plugin.check_peak_context_within(bad, 1_000)
    with pytest.raises(AssertionError, match="less than 95%"):
        plugin.check_cache_reused(good, 0.95)
    with pytest.raises(AssertionError, match="the task's grader says pass"):
        plugin.check_grader_failed(good)
    plugin.check_grader_failed(bad)
    # A run whose cost was never computed is not priced, whatever else it did.
    unpriced = good.result.model_copy(update={"cost": Cost(source="unpriced")})
    with pytest.raises(AssertionError, match="the run is not priced \\(cost unpriced\\)"):
        plugin.check_run_is_priced(CaseOutput(good.cell, unpriced, good.folder, good.workspace))
    # A completed run that names a session log it did not keep is not bound to it.
    completed = bad.result.model_copy(update={"status": "completed"}).with_final_round(
        agent=AgentSummary(exit_code=0, calls=40, turns=40, usage=bad.result.totals.usage)
    )
    with pytest.raises(AssertionError, match=r"its session log session-s2\.jsonl is gone"):
        plugin.check_run_is_real(CaseOutput(bad.cell, completed, bad.folder, bad.workspace))


def test_a_verifier_that_cannot_tell_raises(runs: dict[str, CaseOutput], tmp_path: Path) -> None:
    good = runs["good"]
    no_skill = CaseOutput(good.cell, good.result, good.folder, good.workspace)
    not_graded = good.result.with_final_round(grading=Verdict(outcome="not_graded", error="boom"))
    for call in (
        lambda: plugin.check_files_written(good),
        lambda: plugin.check_tools_used(good),
        lambda: plugin.check_file_matches(good, "calc.py", "("),
        lambda: plugin.check_block_preserved(good, "calc.py", "  "),
        lambda: plugin.check_skill_invoked(no_skill),
        lambda: plugin.check_skill_was_loaded(good),
        lambda: plugin.check_hidden_tests_passed(
            CaseOutput(good.cell, not_graded, good.folder, good.workspace)
        ),
        lambda: plugin.check_subagents_spawned(
            CaseOutput(
                Cell(VariantSpec(harness="codex"), None, 1, 1, "codex"),
                good.result,
                good.folder,
                good.workspace,
            )
        ),
    ):
        with pytest.raises(CannotEvaluate):
            call()


def test_a_cut_patch_cannot_tell_what_was_added_or_deleted(
    runs: dict[str, CaseOutput], tmp_path: Path
) -> None:
    good = runs["good"]
    folder = tmp_path / "cut"
    folder.mkdir()
    # The patch as capture_changes leaves it past its limit: the files after the cut are gone.
    patch = GOOD_DIFF.split("diff --git a/old.txt")[0]
    (folder / "diff.patch").write_text(f"{patch}\n{PATCH_CUT_MARK} 99 bytes in all]\n")
    cut = CaseOutput(good.cell, good.result, folder, good.workspace)
    for check in (
        plugin.check_no_files_added,
        plugin.check_no_files_deleted,
        lambda output: plugin.check_files_deleted(output, "old.txt"),
        lambda output: plugin.check_changes_within(output, "*.py"),
    ):
        with pytest.raises(CannotEvaluate, match="patch was cut"):
            check(cut)


def test_count_compares_numbers_and_sizes() -> None:
    from harnessdrive.pytest_plugin.goldens import Count

    assert Count(1).compare(3, 4) is None
    assert Count(1).compare(3, 5) == "3, want 5 ± 1"
    assert Count(0).compare(2.5, 2.5) is None
    assert Count(1).compare(["a", "b"], ["a"]) is None
    assert Count(0).compare(["a", "b"], ["a"]) == "2, want 1 ± 0"
    with pytest.raises(CannotEvaluate):
        Count(0).compare(True, 1)


def test_a_recorded_golden_keeps_its_owner_and_the_artifact(
    runs: dict[str, CaseOutput], tmp_path: Path
) -> None:
    from harnessdrive.pytest_plugin.goldens import Facet, compare, record

    good = runs["good"]
    facets = [Facet("lines", lambda o: len(o.read("calc.py").splitlines()))]
    path = record(good, facets, tmp_path / "golden")

    stored = json.loads(path.read_text())
    assert stored["_recorded_by"] == good.cell.id
    assert (tmp_path / "golden" / "artifact" / "calc.py").read_text() == (
        good.workspace / "calc.py"
    ).read_text()
    compare(good, facets, tmp_path / "golden")  # the owner key is no facet


def test_subagent_spend_is_priced_per_call_at_each_model_s_own_rate(
    runs: dict[str, CaseOutput],
) -> None:
    good = runs["good"]
    calls = (
        ModelCall(model="claude-sonnet-4-5", usage=Usage(input=1_000, output=1_000)),
        # Two subagents on a cheaper model: 1,000,000 input tokens at $1/MTok each.
        ModelCall(model="claude-haiku-4-5", usage=Usage(input=1_000_000), agent="agent-x"),
        ModelCall(model="claude-haiku-4-5", usage=Usage(input=1_000_000), agent="agent-y"),
    )
    folder = good.folder.parent / "subagents"
    folder.mkdir(exist_ok=True)
    spans = tuple(
        Event(kind="note", text=f"subagent {name}", data={"subagent": name, "seconds": seconds})
        for name, seconds in (("agent-x", 40.0), ("agent-y", 50.0))
    )
    transcript = Transcript(calls=calls, events=spans)
    (folder / "transcript.json").write_text(transcript.model_dump_json())
    run = CaseOutput(good.cell, good.result, folder, good.workspace)
    plugin.check_subagent_spend_within(run, most_usd=2.0, most_seconds=90)
    plugin.check_subagent_spend_within(run, most_seconds=50, each=True)
    with pytest.raises(AssertionError, match=r"all subagents took 90\.0s > 60s"):
        plugin.check_subagent_spend_within(run, most_seconds=60)
    with pytest.raises(AssertionError, match=r"agent-y took 50\.0s > 45s"):
        plugin.check_subagent_spend_within(run, most_seconds=45, each=True)
    plugin.check_subagent_spend_within(run, most_usd=1.0, each=True)
    with pytest.raises(AssertionError, match=r"all subagents cost \$2\.0000 > \$1\.5000"):
        plugin.check_subagent_spend_within(run, most_usd=1.5)
    with pytest.raises(AssertionError, match=r"agent-x cost \$1\.0000 > \$0\.9000"):
        plugin.check_subagent_spend_within(run, most_usd=0.9, each=True)
    codex_cell = Cell(VariantSpec(harness="codex"), None, 1, 1, "codex")
    codex = CaseOutput(codex_cell, good.result, folder, None)
    for cannot in (
        lambda: plugin.check_subagent_spend_within(codex, most_tokens=1),
        lambda: plugin.check_compactions_within(codex, 0),
        lambda: plugin.check_subagent_spend_within(run),
    ):
        with pytest.raises(CannotEvaluate):
            cannot()


def test_the_skill_s_loaded_bytes_come_from_its_own_folder(tmp_path: Path) -> None:
    root = tmp_path / "greet"
    (root / "references").mkdir(parents=True)
    (root / "SKILL.md").write_text("s" * 100)
    (root / "references" / "big.md").write_text("b" * 5_000)
    (root / "references" / "other.md").write_text("o" * 7_000)
    skill = Skill("greet", root)
    read = coverage(skill, "claude", ".claude/skills/greet", [("tool_call", "references/big.md")])
    # SKILL.md is injected by Claude Code on invocation; big.md was read; other.md never was.
    assert (read.loaded, read.loaded_bytes) == (("SKILL.md", "references/big.md"), 5_100)
