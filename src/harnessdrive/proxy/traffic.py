"""What the proxy saw of one agent run's model traffic, and what that is evidence of.

The proxy runs in harnessdrive's own process, outside the sandbox: nothing the agent prints or
writes changes these records. They decide the two questions the agent's own logs must never
decide: did the agent get to work at all (a model answered), and did the provider refuse it
for load (status 429, 503, 529) so the try may be run again.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from harnessdrive.transcript.models import Usage

LOAD_STATUSES = frozenset({429, 503, 529})
"""A provider's answers for "too many requests" and "overloaded"."""
LOGIN_STATUSES = frozenset({401, 403})
"""A provider's answers for a missing or refused key."""
CALLS_FILE = "model-calls.jsonl"
"""Every call the proxy forwarded, one JSON object a line, in the trial folder."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProxiedCall(_Model):
    """One request the proxy forwarded, and the provider's answer."""

    method: str
    path: str
    """The request's path, without its query (a Gemini key can ride there)."""
    generation: bool
    """A request for model output (Messages, Chat Completions, Responses, generateContent);
    model lists, token counts and telemetry are not."""
    status: int | None
    """The provider's HTTP status; None when it never answered (unreachable, cut off)."""
    started: float
    """Seconds after the proxy started."""
    seconds: float
    streamed: bool = False
    model: str | None = None
    usage: Usage | None = None
    """Tokens the answer reported; None when it reported none (an error, a cut-off stream)."""
    error: str | None = None


class Traffic(_Model):
    """One run's calls as the proxy saw them, summed; ``result.json`` keeps this per round."""

    upstream: str
    """Where the proxy forwarded to (scheme, host and port)."""
    calls: int = 0
    generations: int = 0
    answered: int = 0
    """Generation requests the provider answered with a 2xx status."""
    statuses: dict[str, int] = {}
    """How many answers had each status (``"none"`` for no answer), over every request."""
    last_status: int | None = None
    """The status of the last generation request: what the CLI gave up on, if it did."""
    usage: Usage = Usage()
    """Tokens over every answered generation request."""
    unmetered: int = 0
    """Answered generation requests whose usage could not be read."""

    @classmethod
    def of(cls, upstream: str, calls: tuple[ProxiedCall, ...]) -> Traffic:
        traffic = cls(upstream=upstream)
        for call in calls:
            traffic = traffic.with_call(call)
        return traffic

    @staticmethod
    def summed(each: Sequence[Traffic | None]) -> Traffic | None:
        """Every round's proxied calls summed, when every round's went through the proxy."""
        if not each or any(traffic is None for traffic in each):
            return None
        known = [traffic for traffic in each if traffic is not None]
        first = known[0]
        return first.model_copy(
            update={
                "calls": sum(t.calls for t in known),
                "generations": sum(t.generations for t in known),
                "answered": sum(t.answered for t in known),
                "unmetered": sum(t.unmetered for t in known),
                "usage": sum((t.usage for t in known[1:]), first.usage),
                "last_status": known[-1].last_status,
                "statuses": {
                    key: sum(t.statuses.get(key, 0) for t in known)
                    for key in sorted({key for t in known for key in t.statuses})
                },
            }
        )

    def with_call(self, call: ProxiedCall) -> Traffic:
        """These sums with one more call."""
        key = "none" if call.status is None else str(call.status)
        statuses = dict(self.statuses)
        statuses[key] = statuses.get(key, 0) + 1
        update: dict[str, object] = {
            "calls": self.calls + 1,
            "statuses": dict(sorted(statuses.items())),
        }
        if call.generation:
            update["generations"] = self.generations + 1
            update["last_status"] = call.status
            if call.status is not None and 200 <= call.status < 300:
                update["answered"] = self.answered + 1
                if call.usage is None:
                    update["unmetered"] = self.unmetered + 1
                else:
                    update["usage"] = self.usage + call.usage
        return self.model_copy(update=update)

    @property
    def reached_model(self) -> bool:
        """A model answered at least once: the agent got to work, so the trial is graded."""
        return self.answered > 0

    @property
    def refused_for_load(self) -> bool:
        """The provider refused the last generation request for load."""
        return self.last_status in LOAD_STATUSES

    @property
    def login_refused(self) -> bool:
        """No model answered, and the provider turned the key away."""
        return not self.reached_model and any(
            self.statuses.get(str(status)) for status in LOGIN_STATUSES
        )

    def why_not_reached(self) -> str:
        """Why the agent never got to work, as the proxy saw it."""
        if self.generations == 0:
            return f"no model request reached {self.upstream}"
        if self.login_refused:
            return f"{self.upstream} refused the key (HTTP {_shown(self.statuses)})"
        return f"{self.upstream} answered no model request ({_shown(self.statuses)})"


def _shown(statuses: dict[str, int]) -> str:
    return ", ".join(f"{status} x{count}" for status, count in statuses.items())
