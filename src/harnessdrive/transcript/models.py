"""The provider-neutral record of one agent run.

Every adapter turns what its CLI printed and logged into a :class:`Transcript`. Token counts are
normalised to disjoint tiers so that pricing never double-counts: ``input`` excludes anything read
from or written to the cache, and ``output`` already includes reasoning (``reasoning`` says how much
of it was reasoning).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Usage(_Model):
    """Tokens of one model call (or a sum of calls), in disjoint tiers."""

    input: int = 0
    """Uncached input tokens."""
    cache_read: int = 0
    """Input tokens read from the prompt cache."""
    cache_write: int = 0
    """Input tokens written to the prompt cache (all TTLs together)."""
    cache_write_1h: int = 0
    """The part of ``cache_write`` written with a one-hour TTL (billed higher by Anthropic)."""
    output: int = 0
    """Output tokens, reasoning included."""
    reasoning: int = 0
    """The part of ``output`` that was reasoning."""

    @property
    def total(self) -> int:
        return self.input + self.cache_read + self.cache_write + self.output

    @property
    def prompt_tokens(self) -> int:
        """Everything the model read for this call; decides long-context pricing tiers."""
        return self.input + self.cache_read + self.cache_write

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input=self.input + other.input,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            cache_write_1h=self.cache_write_1h + other.cache_write_1h,
            output=self.output + other.output,
            reasoning=self.reasoning + other.reasoning,
        )


class ModelCall(_Model):
    """One request to a model API, as the harness logged it."""

    model: str
    """The model id the API reported (or, failing that, the one requested)."""
    usage: Usage
    provider: str | None = None
    """Provider id when the harness names one (``anthropic``, ``openai``, ``google``, ...)."""
    agent: str | None = None
    """The subagent that made the call (its own log's name); ``None`` for the main agent."""
    time: str | None = None
    """When the CLI logged the call's answer (ISO 8601, UTC); ``None`` where its log says not."""
    position: int | None = None
    """Where the call's answer begins among the transcript's events: the index of the first
    event it produced (the number of events before it). ``None`` where the log cannot place it."""


EventKind = Literal[
    "message", "tool_call", "tool_result", "command", "file_change", "error", "retry", "note"
]


class Event(_Model):
    """One thing that happened during the run, in order."""

    kind: EventKind
    text: str = ""
    """Message text, tool name, command line, file path or error message."""
    data: dict[str, Any] = Field(default_factory=dict)
    """Details that depend on the kind: tool input, exit code, output excerpt, ..."""
    time: str | None = None
    """When the CLI logged it (ISO 8601, UTC, milliseconds); ``None`` where its log has no time."""


class Transcript(_Model):
    """What one agent run did and spent."""

    events: tuple[Event, ...] = ()
    calls: tuple[ModelCall, ...] = ()
    session_id: str | None = None
    session_log: str | None = None
    """Path of the harness's own session log this transcript was bound to, if any."""
    model: str | None = None
    """The model the API reported most (by tokens), if any call was made."""
    turns: int | None = None
    tool_calls: int = 0
    permission_denials: int = 0
    reported_cost_usd: float | None = None
    """The harness's own cost figure, kept beside ours for reconciliation."""
    billing: Literal["api", "subscription"] | None = None
    """How the run was paid for, when the harness can tell: per token through an API key, or
    by a subscription login (its cost is then labelled as the API-equivalent)."""
    final_message: str | None = None
    error: str | None = None

    @property
    def usage(self) -> Usage:
        total = Usage()
        for call in self.calls:
            total = total + call.usage
        return total

    @property
    def made_model_calls(self) -> bool:
        return bool(self.calls)
