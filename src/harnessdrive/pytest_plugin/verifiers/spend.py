"""Verifiers of what the run spent: dollars, tokens, seconds and context."""

from __future__ import annotations

from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput


def check_cost_within(output: CaseOutput, most_usd: float) -> None:
    usd = output.cost_usd
    if usd is None:
        raise CannotEvaluate(f"{output.cell.id}: the cost is unknown ({output.result.cost.source})")
    if usd > most_usd:
        raise AssertionError(f"{output.cell.id}: cost ${usd:.4f} > ${most_usd:.4f}")


def check_tokens_within(output: CaseOutput, most: int) -> None:
    """All tokens billed over the run's calls (every call re-reads its prompt, so this is a
    spend figure, not a size) are at most ``most``."""
    if output.result.cost.source == "none":
        raise CannotEvaluate(f"{output.cell.id}: this harness runs no model")
    if output.tokens > most:
        raise AssertionError(f"{output.cell.id}: {output.tokens:,} tokens billed > {most:,}")


def check_seconds_within(output: CaseOutput, most: float) -> None:
    """The agent's run took at most ``most`` seconds."""
    seconds = output.result.seconds.agent
    if seconds > most:
        raise AssertionError(f"{output.cell.id}: the agent took {seconds:.1f}s > {most:g}s")


def check_peak_context_within(output: CaseOutput, most: int) -> None:
    """No single call read more than ``most`` prompt tokens (input, cache reads and writes)."""
    calls = output.transcript.calls
    if not calls:
        raise CannotEvaluate(f"{output.cell.id}: no model call was recorded")
    peak = max(call.usage.prompt_tokens for call in calls)
    if peak > most:
        raise AssertionError(f"{output.cell.id}: a call read {peak:,} prompt tokens > {most:,}")


def check_cache_reused(output: CaseOutput, at_least: float) -> None:
    """At least the fraction ``at_least`` of all prompt tokens was read from the cache."""
    usage = output.transcript.usage
    if usage.prompt_tokens == 0:
        raise CannotEvaluate(f"{output.cell.id}: no prompt tokens were recorded")
    ratio = usage.cache_read / usage.prompt_tokens
    if ratio < at_least:
        raise AssertionError(
            f"{output.cell.id}: {ratio:.0%} of prompt tokens came from the cache, "
            f"less than {at_least:.0%}"
        )
