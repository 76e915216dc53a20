"""Verifiers a case calls on its :class:`CaseOutput`. Each one fails with an AssertionError when
the run does not meet it, and raises :class:`CannotEvaluate` when it cannot tell: a check that
cannot evaluate never passes."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput
from harnessdrive.pytest_plugin.skills import SkillCoverage

__all__ = [
    "check_cost_within",
    "check_file_unchanged",
    "check_files_written",
    "check_hidden_tests_passed",
    "check_no_files_added",
    "check_rollout",
    "check_skill_scripts_ran",
    "check_skill_was_loaded",
    "check_tools_used",
    "check_turns_within",
]


def check_rollout(output: CaseOutput) -> None:
    """A real session: it completed, made model calls bound to a session log, and was priced
    (or ran no model at all)."""
    result = output.result
    if result.status != "completed":
        raise AssertionError(f"{output.cell.id}: the trial {result.status}, not completed")
    agent = result.agent
    if agent.error:
        raise AssertionError(f"{output.cell.id}: the agent failed: {agent.error}")
    cost = result.cost
    if cost.source == "none":
        return  # a harness that runs no model (a scripted agent) has nothing to bill
    if agent.calls == 0 or result.totals.usage.total == 0:
        raise AssertionError(f"{output.cell.id}: no billed model call was recorded")
    if cost.usd is None or cost.source not in ("computed", "reported"):
        raise AssertionError(f"{output.cell.id}: the run is not priced (cost {cost.source})")
    transcript = output.transcript
    if transcript.session_log is not None and not (output.folder / transcript.session_log).exists():
        raise AssertionError(f"{output.cell.id}: its session log {transcript.session_log} is gone")


def check_hidden_tests_passed(output: CaseOutput) -> None:
    """The task's grader passed the change (its hidden tests, for a task folder)."""
    grading = output.result.grading
    if grading is None or output.result.outcome in ("not_graded", "error"):
        reason = grading.error if grading is not None and grading.error else "not graded"
        raise CannotEvaluate(f"{output.cell.id}: the task's grader gave no verdict ({reason})")
    if output.result.outcome != "pass":
        raise AssertionError(f"{output.cell.id}: the task's grader says {output.result.outcome}")


def check_files_written(output: CaseOutput, *paths: str) -> None:
    """This run wrote each of ``paths`` (its change touches them)."""
    if not paths:
        raise CannotEvaluate("check_files_written needs at least one path")
    written = set(output.files_written)
    missing = [p for p in paths if p not in written]
    if missing:
        raise AssertionError(f"{output.cell.id}: not written by this run: {', '.join(missing)}")


def check_file_unchanged(output: CaseOutput, *paths: str) -> None:
    if not paths:
        raise CannotEvaluate("check_file_unchanged needs at least one path")
    changed = [p for p in paths if p in set(output.files_written)]
    if changed:
        raise AssertionError(f"{output.cell.id}: changed: {', '.join(changed)}")


def check_no_files_added(output: CaseOutput, allow: Iterable[str] = ()) -> None:
    """The change adds no file, except those matching an ``allow`` glob."""
    allowed = tuple(allow)
    added, current = [], ""
    for line in output.diff.splitlines():
        if line.startswith("diff --git "):
            current = line.rsplit(" b/", 1)[-1]
        elif line.startswith("new file mode"):
            added.append(current)
    stray = [p for p in added if not any(fnmatch.fnmatch(p, g) for g in allowed)]
    if stray:
        raise AssertionError(f"{output.cell.id}: added files: {', '.join(stray)}")


def check_tools_used(output: CaseOutput, *names: str) -> None:
    if not names:
        raise CannotEvaluate("check_tools_used needs at least one tool name")
    used = {e.text for e in output.transcript.events if e.kind == "tool_call"}
    if not used and output.tool_calls == 0 and output.result.cost.source == "none":
        raise CannotEvaluate(f"{output.cell.id}: this harness records no tool calls")
    missing = [n for n in names if n not in used]
    if missing:
        listed = ", ".join(sorted(used))
        raise AssertionError(f"{output.cell.id}: tools not used: {', '.join(missing)} ({listed})")


def check_turns_within(output: CaseOutput, most: int, least: int = 0) -> None:
    turns = output.result.agent.turns
    if turns is None:
        raise CannotEvaluate(f"{output.cell.id}: the harness reported no turn count")
    if not least <= turns <= most:
        raise AssertionError(f"{output.cell.id}: {turns} turns, not within [{least}, {most}]")


def check_cost_within(output: CaseOutput, most_usd: float) -> None:
    usd = output.cost_usd
    if usd is None:
        raise CannotEvaluate(f"{output.cell.id}: the cost is unknown ({output.result.cost.source})")
    if usd > most_usd:
        raise AssertionError(f"{output.cell.id}: cost ${usd:.4f} > ${most_usd:.4f}")


def _coverage(output: CaseOutput) -> SkillCoverage:
    if output.skill is None:
        raise CannotEvaluate(f"{output.cell.id}: the case names no skill")
    if not output.skill.observed:
        raise CannotEvaluate(f"{output.cell.id}: the harness records no events to read coverage")
    return output.skill


def check_skill_was_loaded(output: CaseOutput, *files: str) -> None:
    """The agent loaded these files of the skill (paths inside the skill folder)."""
    coverage = _coverage(output)
    if not files:
        raise CannotEvaluate("check_skill_was_loaded needs at least one file of the skill")
    missing = [f for f in files if f not in coverage.loaded]
    if missing:
        raise AssertionError(f"{output.cell.id}: skill files not loaded: {', '.join(missing)}")


def check_skill_scripts_ran(output: CaseOutput, *scripts: str) -> None:
    coverage = _coverage(output)
    wanted = scripts or tuple(coverage.ran) + tuple(coverage.not_run)
    if not wanted:
        raise CannotEvaluate(f"{output.cell.id}: the skill has no scripts/")
    missing = [s for s in wanted if s not in coverage.ran]
    if missing:
        raise AssertionError(f"{output.cell.id}: skill scripts not run: {', '.join(missing)}")
