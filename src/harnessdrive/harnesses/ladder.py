"""A harness's reasoning-effort ladder: its own rungs, lowest first, and the portable aliases.

``min``, ``mid`` and ``max`` name the same position on every ladder (the lowest rung, the
middle one, the highest), so one sweep over ``min,max`` means the same thing for every harness.
A rung's own name always wins over an alias of the same spelling.
"""

from __future__ import annotations

from dataclasses import dataclass

from harnessdrive.errors import did_you_mean

ALIASES = ("min", "mid", "max")


@dataclass(frozen=True)
class EffortLadder:
    """The rungs a harness accepts as ``effort``; empty when it has no effort setting."""

    rungs: tuple[str, ...] = ()
    """The harness's own values, lowest first."""

    def __post_init__(self) -> None:
        if len(set(self.rungs)) != len(self.rungs):
            raise ValueError(f"an effort ladder names a rung twice: {', '.join(self.rungs)}")

    @property
    def aliases(self) -> dict[str, str]:
        """``min``/``mid``/``max`` -> the rung each means here; empty for an empty ladder."""
        if not self.rungs:
            return {}
        return {
            "min": self.rungs[0],
            "mid": self.rungs[(len(self.rungs) - 1) // 2],
            "max": self.rungs[-1],
        }

    def resolve(self, value: str) -> str | None:
        """The rung ``value`` names (itself, or the rung an alias stands for); None if none."""
        if value in self.rungs:
            return value
        return self.aliases.get(value)

    def describe(self) -> str:
        """``low, medium, high (min=low, mid=medium, max=high)``, or ``none``."""
        if not self.rungs:
            return "none"
        aliases = ", ".join(f"{alias}={rung}" for alias, rung in self.aliases.items())
        return f"{', '.join(self.rungs)} ({aliases})"


def unknown_rung(ladder: EffortLadder, value: str, *, aliases: bool = True) -> str | None:
    """Why ``value`` is no effort of ``ladder`` (``has no effort 'hgh' (did you mean ...``);
    None when it names a rung (or, with ``aliases``, an alias)."""
    if not ladder.rungs:
        return "has no reasoning-effort setting"
    if value in ladder.rungs or (aliases and ladder.resolve(value) is not None):
        return None
    choices = (*ladder.rungs, *ALIASES) if aliases else ladder.rungs
    shown = ladder.describe() if aliases else ", ".join(ladder.rungs)
    return f"has no effort {value!r}{did_you_mean(value, choices)}; its ladder is {shown}"
