"""Verifiers of how the run used its context and its helpers: compactions, long-context calls
and the subagents' own spend (each subagent's calls are read from its own log)."""

from __future__ import annotations

from collections import defaultdict
from datetime import date

from harnessdrive.accounting import PriceBook
from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput
from harnessdrive.transcript.models import ModelCall

COMPACTING_HARNESSES = frozenset({"claude", "pi"})
"""The CLIs whose logs say when they compacted their context."""
SUBAGENT_HARNESSES = frozenset({"claude"})
"""The CLIs whose subagents' calls are told apart from the main agent's."""


def compactions(output: CaseOutput) -> int:
    harness = output.cell.variant.harness
    if harness not in COMPACTING_HARNESSES:
        raise CannotEvaluate(f"{output.cell.id}: {harness} does not log its compactions")
    return sum(1 for e in output.transcript.events if e.kind == "note" and "compaction" in e.data)


def check_compactions_within(output: CaseOutput, most: int, least: int = 0) -> None:
    """The CLI compacted its context between ``least`` and ``most`` times (``least=1`` checks
    that a long task really exercised compaction)."""
    count = compactions(output)
    if not least <= count <= most:
        raise AssertionError(
            f"{output.cell.id}: context compacted {count} time(s), not within [{least}, {most}]"
        )


def check_long_context_calls_within(output: CaseOutput, most: int, above: int = 200_000) -> None:
    """At most ``most`` calls read more than ``above`` prompt tokens (input, cache reads and
    writes): the calls a provider bills at long-context rates, or that risk a model's limit."""
    calls = output.transcript.calls
    if not calls:
        raise CannotEvaluate(f"{output.cell.id}: no model call was recorded")
    long = [c.usage.prompt_tokens for c in calls if c.usage.prompt_tokens > above]
    if len(long) > most:
        raise AssertionError(
            f"{output.cell.id}: {len(long)} call(s) read over {above:,} prompt tokens "
            f"(largest {max(long):,}), more than {most}"
        )


def subagent_calls(output: CaseOutput) -> dict[str, list[ModelCall]]:
    harness = output.cell.variant.harness
    if harness not in SUBAGENT_HARNESSES:
        raise CannotEvaluate(f"{output.cell.id}: {harness}'s subagent calls cannot be told apart")
    by_agent: dict[str, list[ModelCall]] = defaultdict(list)
    for call in output.transcript.calls:
        if call.agent is not None:
            by_agent[call.agent].append(call)
    return dict(by_agent)


def subagent_seconds(output: CaseOutput) -> dict[str, float]:
    """Each subagent's time, first to last entry of its own log."""
    return {
        str(e.data["subagent"]): float(e.data.get("seconds", 0.0))
        for e in output.transcript.events
        if e.kind == "note" and "subagent" in e.data
    }


def check_subagent_spend_within(
    output: CaseOutput,
    *,
    most_usd: float | None = None,
    most_tokens: int | None = None,
    most_seconds: float | None = None,
    each: bool = False,
    prices: PriceBook | None = None,
) -> None:
    """The subagents together (or, with ``each``, every one of them) billed at most
    ``most_tokens`` tokens, cost at most ``most_usd`` and took at most ``most_seconds`` (the
    sum of their own logs' spans), each call priced at its own model's rate on the day the trial
    ran (``prices``: the session's price book; the bundled records by default). A run without
    subagents spent nothing on them."""
    if most_usd is None and most_tokens is None and most_seconds is None:
        raise CannotEvaluate(
            "check_subagent_spend_within needs most_usd, most_tokens or most_seconds"
        )
    groups = subagent_calls(output)
    seconds = subagent_seconds(output)
    if most_seconds is not None:
        timed = seconds if each else {"all subagents": sum(seconds.values())}
        for name, took in timed.items():
            if took > most_seconds:
                raise AssertionError(
                    f"{output.cell.id}: {name} took {took:.1f}s > {most_seconds:g}s"
                )
    spans = groups if each else {"all subagents": [c for calls in groups.values() for c in calls]}
    book = prices or PriceBook.bundled()
    day = output.result.cost.priced_on or date.fromisoformat(output.result.started[:10])
    for name, calls in spans.items():
        tokens = sum(c.usage.total for c in calls)
        if most_tokens is not None and tokens > most_tokens:
            raise AssertionError(
                f"{output.cell.id}: {name} billed {tokens:,} tokens > {most_tokens:,}"
            )
        if most_usd is None or not calls:
            continue
        pricing = book.price(calls, on=day)
        usd = pricing.total_usd
        if usd is None:
            raise CannotEvaluate(
                f"{output.cell.id}: {name} used unpriced models {list(pricing.unpriced_models)}"
            )
        if usd > most_usd:
            raise AssertionError(f"{output.cell.id}: {name} cost ${usd:.4f} > ${most_usd:.4f}")
