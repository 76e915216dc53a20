"""Verifiers of the skill under test: that it was invoked in the harness's own dialect, which
of its files the agent loaded, how much context they cost and which of its scripts ran."""

from __future__ import annotations

import json

from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput
from harnessdrive.pytest_plugin.skills import SKILL_FILE, SkillCoverage


def _coverage(output: CaseOutput) -> SkillCoverage:
    if output.skill is None:
        raise CannotEvaluate(f"{output.cell.id}: the case names no skill")
    if not output.skill.observed:
        raise CannotEvaluate(f"{output.cell.id}: the harness records no events to read coverage")
    return output.skill


def check_skill_invoked(output: CaseOutput) -> None:
    """The agent used the skill, as its transcript shows: a Skill tool call naming it (Claude
    Code), or a read of one of its files or a run of one of its scripts where it was installed.
    What harnessdrive put in the prompt proves nothing of the kind, so it is not read."""
    if output.skill is None:
        raise CannotEvaluate(f"{output.cell.id}: the case names no skill")
    events = output.transcript.events
    if not events:
        raise CannotEvaluate(f"{output.cell.id}: the harness recorded no events to read")
    installed = output.skill.installed_at
    name = installed.rsplit("/", 1)[-1]
    for event in events:
        text = f"{event.text} {json.dumps(event.data, default=str)}"
        if event.kind == "tool_call" and event.text == "Skill" and name in text:
            return
        if installed in text:
            return
    raise AssertionError(
        f"{output.cell.id}: the transcript shows no use of the skill {name!r}: no Skill tool "
        f"call naming it, no read of a file under {installed}, no run of its scripts"
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


def check_skill_context_within(output: CaseOutput, most_bytes: int) -> None:
    """The skill's files the agent loaded come to at most ``most_bytes`` (their size in the
    skill's own folder): a skill meant to load its references on demand that gets read whole
    fails."""
    coverage = _coverage(output)
    if coverage.loaded_bytes > most_bytes:
        loaded = ", ".join(coverage.loaded)
        raise AssertionError(
            f"{output.cell.id}: the skill's loaded files come to {coverage.loaded_bytes:,} "
            f"bytes > {most_bytes:,} ({loaded})"
        )
