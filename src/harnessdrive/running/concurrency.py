"""At most N trials of a harness, a variant or a provider at once, whatever ``--jobs`` says.

A limit is named by what it counts: a harness name (``claude-code``), a variant label
(``claude-code@opus``) or a provider (``provider:anthropic``, every variant whose planned
models are priced at that provider). The driver holds the slots: it dispatches every trial,
so a limit holds on one machine and across a cluster alike. Limits come from the suite's
``[concurrency]`` table and from ``--limit NAME=N``, the command line winning.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from harnessdrive.errors import UserError
from harnessdrive.tasks.models import VariantSpec

PROVIDER_PREFIX = "provider:"


@dataclass(frozen=True)
class ConcurrencyLimits:
    """Named limits; see the module's docstring for what a name counts."""

    limits: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, most in self.limits.items():
            if not name or most < 1:
                raise UserError(f"concurrency limit {name}={most}: must be a name and at least 1")

    def merged(self, over: Mapping[str, int]) -> ConcurrencyLimits:
        """These limits, with ``over`` replacing any of the same name."""
        return ConcurrencyLimits({**self.limits, **over})


def parse_limit(text: str) -> tuple[str, int]:
    """``NAME=N`` as given on the command line."""
    name, sep, value = text.partition("=")
    try:
        most = int(value)
    except ValueError:
        most = 0
    if not sep or not name.strip() or most < 1:
        raise UserError(
            f"bad concurrency limit {text!r}: expected NAME=N with N at least 1 "
            "(NAME a harness, a variant label or provider:NAME)"
        )
    return name.strip(), most


class Slots:
    """The limits' counts of trials in flight."""

    def __init__(
        self,
        limits: ConcurrencyLimits,
        providers: Callable[[VariantSpec], Iterable[str]] = lambda variant: (),
    ) -> None:
        self._limits = dict(limits.limits)
        self._providers = providers
        self._running: dict[str, int] = {}

    def names(self, variant: VariantSpec) -> tuple[str, ...]:
        """The limits that count ``variant``'s trials."""
        candidates = [variant.harness, variant.label]
        candidates += [PROVIDER_PREFIX + p for p in self._providers(variant)]
        return tuple(dict.fromkeys(n for n in candidates if n in self._limits))

    def free(self, variant: VariantSpec) -> bool:
        return all(self._running.get(n, 0) < self._limits[n] for n in self.names(variant))

    def take(self, variant: VariantSpec) -> None:
        for name in self.names(variant):
            self._running[name] = self._running.get(name, 0) + 1

    def give_back(self, variant: VariantSpec) -> None:
        for name in self.names(variant):
            self._running[name] = max(0, self._running.get(name, 0) - 1)
