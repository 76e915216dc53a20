"""Verifiers of the skill under test: that it was invoked in the harness's own dialect, which
of its files the agent loaded and which of its scripts ran."""

from __future__ import annotations

from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput
from harnessdrive.pytest_plugin.skills import DIALECTS, SKILL_FILE, SkillCoverage


def _coverage(output: CaseOutput) -> SkillCoverage:
    if output.skill is None:
        raise CannotEvaluate(f"{output.cell.id}: the case names no skill")
    if not output.skill.observed:
        raise CannotEvaluate(f"{output.cell.id}: the harness records no events to read coverage")
    return output.skill


def check_skill_invoked(output: CaseOutput) -> None:
    """The prompt named the skill the way its harness's users do (``/skill`` for Claude Code,
    ``$skill`` for Codex), or carried its SKILL.md where the harness has no skills."""
    if output.skill is None:
        raise CannotEvaluate(f"{output.cell.id}: the case names no skill")
    name = output.skill.installed_at.rsplit("/", 1)[-1]
    dialect = DIALECTS.get(output.skill.dialect)
    expected = (
        dialect.invocation.format(skill=name, task="").strip()
        if dialect is not None and dialect.invocation
        else f"Use the skill {name!r}"
    )
    prompt_file = output.folder / "prompt.md"
    if not prompt_file.is_file():
        raise CannotEvaluate(f"{output.cell.id}: no prompt.md in {output.folder}")
    prompt = prompt_file.read_text(encoding="utf-8", errors="replace")
    if not prompt.startswith(expected):
        raise AssertionError(
            f"{output.cell.id}: the prompt does not start with {expected!r}: {prompt[:60]!r}"
        )


def check_skill_was_loaded(output: CaseOutput, *files: str) -> None:
    """The agent loaded these files of the skill (paths inside the skill folder). Name its
    resources and scripts: SKILL.md is injected by some CLIs and read by others."""
    coverage = _coverage(output)
    if not files:
        raise CannotEvaluate(
            f"check_skill_was_loaded needs the skill's files to look for (not only {SKILL_FILE})"
        )
    missing = [f for f in files if f not in coverage.loaded]
    if missing:
        loaded = ", ".join(coverage.loaded) or "nothing"
        raise AssertionError(
            f"{output.cell.id}: skill files not loaded: {', '.join(missing)} (loaded: {loaded})"
        )


def check_skill_scripts_ran(output: CaseOutput, *scripts: str) -> None:
    """These scripts of the skill ran (all of its scripts/ when none is named)."""
    coverage = _coverage(output)
    wanted = scripts or tuple(coverage.ran) + tuple(coverage.not_run)
    if not wanted:
        raise CannotEvaluate(f"{output.cell.id}: the skill has no scripts/")
    missing = [s for s in wanted if s not in coverage.ran]
    if missing:
        ran = ", ".join(coverage.ran) or "none"
        raise AssertionError(
            f"{output.cell.id}: skill scripts not run: {', '.join(missing)} (ran: {ran})"
        )
