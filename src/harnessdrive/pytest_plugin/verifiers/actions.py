"""Verifiers of what the agent did on the way: the tools it called, the commands it ran,
the subagents it spawned, and how many turns and tool calls it took."""

from __future__ import annotations

from collections import Counter

from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput

SUBAGENT_TOOLS = {"claude": frozenset({"Task", "Agent"})}
"""The tool each CLI spawns a subagent with; a CLI not named here cannot be checked."""


def _tools(output: CaseOutput) -> Counter[str]:
    used = Counter(e.text for e in output.transcript.events if e.kind == "tool_call")
    if not used and output.tool_calls == 0 and output.result.cost.source == "none":
        raise CannotEvaluate(f"{output.cell.id}: this harness records no tool calls")
    return used


def _shown(used: Counter[str]) -> str:
    return ", ".join(f"{name}×{n}" for name, n in sorted(used.items())) or "no tools"


def check_tools_used(output: CaseOutput, *names: str) -> None:
    """Each named tool was called at least once."""
    if not names:
        raise CannotEvaluate("check_tools_used needs at least one tool name")
    used = _tools(output)
    missing = [n for n in names if not used[n]]
    if missing:
        raise AssertionError(
            f"{output.cell.id}: tools not used: {', '.join(missing)} (it called {_shown(used)})"
        )


def check_tools_not_used(output: CaseOutput, *names: str) -> None:
    """None of the named tools was called (a web fetch in an offline task, say)."""
    if not names:
        raise CannotEvaluate("check_tools_not_used needs at least one tool name")
    used = _tools(output)
    called = [n for n in names if used[n]]
    if called:
        raise AssertionError(f"{output.cell.id}: called {', '.join(called)} ({_shown(used)})")


def _commands(output: CaseOutput) -> list[str]:
    commands = [e.text for e in output.transcript.events if e.kind == "command"]
    if not commands and not output.transcript.events:
        raise CannotEvaluate(f"{output.cell.id}: this harness records no events to read")
    return commands


def check_commands_ran(output: CaseOutput, *fragments: str) -> None:
    """For each fragment, some command the agent ran contains it (``pytest``, ``make lint``)."""
    if not fragments:
        raise CannotEvaluate("check_commands_ran needs at least one command fragment")
    commands = _commands(output)
    missing = [f for f in fragments if not any(f in c for c in commands)]
    if missing:
        ran = "; ".join(commands[:5]) or "no commands"
        raise AssertionError(f"{output.cell.id}: never ran {', '.join(missing)} (ran: {ran})")


def check_commands_not_run(output: CaseOutput, *fragments: str) -> None:
    """No command the agent ran contains any of the fragments (``git push``, ``rm -rf``)."""
    if not fragments:
        raise CannotEvaluate("check_commands_not_run needs at least one command fragment")
    hits = [c for c in _commands(output) if any(f in c for f in fragments)]
    if hits:
        raise AssertionError(f"{output.cell.id}: ran {'; '.join(hits[:3])}")


def check_turns_within(output: CaseOutput, most: int, least: int = 0) -> None:
    """The run took between ``least`` and ``most`` turns: one turn often means the skill never
    loaded, a run at the ceiling that it looped."""
    turns = output.result.agent.turns
    if turns is None:
        raise CannotEvaluate(f"{output.cell.id}: the harness reported no turn count")
    if not least <= turns <= most:
        raise AssertionError(f"{output.cell.id}: {turns} turns, not within [{least}, {most}]")


def check_tool_calls_within(output: CaseOutput, most: int, least: int = 0) -> None:
    """The run made between ``least`` and ``most`` tool calls."""
    calls = output.tool_calls
    if not least <= calls <= most:
        raise AssertionError(f"{output.cell.id}: {calls} tool calls, not within [{least}, {most}]")


def check_subagents_spawned(output: CaseOutput, at_least: int = 1) -> None:
    """The run delegated to at least ``at_least`` subagents."""
    harness = output.cell.variant.harness
    tools = SUBAGENT_TOOLS.get(harness)
    if tools is None:
        raise CannotEvaluate(f"{output.cell.id}: how {harness} spawns subagents is not known")
    used = _tools(output)
    spawned = sum(used[t] for t in tools)
    if spawned < at_least:
        raise AssertionError(
            f"{output.cell.id}: {spawned} subagent(s) spawned, fewer than {at_least} "
            f"(it called {_shown(used)})"
        )
