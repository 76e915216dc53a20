"""The price book: dated records in two layers, looked up by model id, provider and day.

The *override* layer (user files) is searched before the *bundled* layer, name by name, so a user
record wins wherever its days overlap a bundled one and the bundled record still applies on the
other days. The book never guesses: an id that matches no record, matches only another provider's
records, has no record in force on the day, or matches several providers' records with no
provider given, is unpriced, with a reason.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import date
from os import PathLike

from harnessdrive.accounting.bundled_prices import bundled_records
from harnessdrive.accounting.call_cost import Lookup, Pricing, price_calls
from harnessdrive.accounting.model_ids import normalise_provider, parse_model_id
from harnessdrive.accounting.price_overrides import check_no_overlap, load_override_file
from harnessdrive.accounting.price_records import PriceRecord
from harnessdrive.transcript import ModelCall

_Index = dict[str, list[PriceRecord]]


def _index(records: Iterable[PriceRecord]) -> _Index:
    index: _Index = defaultdict(list)
    for record in records:
        for name in record.names:
            index[name].append(record)
    return dict(index)


def _inherit_names(override: PriceRecord, bundled: _Index) -> PriceRecord:
    """Give an override every name of the bundled model it replaces, so that it wins whichever of
    that model's names a harness reports."""
    names = set(override.aliases)
    for name in override.names:
        for record in bundled.get(name, ()):
            if override.provider is None or record.provider == override.provider:
                names.update(record.names)
    names.discard(override.model)
    if names == set(override.aliases):
        return override
    return override.model_copy(update={"aliases": tuple(sorted(names))})


class PriceBook:
    """Dated price records, bundled and user-supplied; see docs/pricing.md."""

    def __init__(
        self, records: Iterable[PriceRecord] = (), *, overrides: Iterable[PriceRecord] = ()
    ) -> None:
        self._bundled = tuple(records)
        check_no_overlap(self._bundled)
        bundled_index = _index(self._bundled)
        self._overrides = tuple(_inherit_names(record, bundled_index) for record in overrides)
        check_no_overlap(self._overrides)
        self._layers: tuple[_Index, ...] = (_index(self._overrides), bundled_index)

    @classmethod
    def bundled(cls) -> PriceBook:
        """The records shipped with harnessdrive, no overrides."""
        return cls(bundled_records())

    @classmethod
    def load(
        cls,
        extra_files: Sequence[str | PathLike[str]] = (),
        *,
        include_bundled: bool = True,
        extra_records: Sequence[PriceRecord] = (),
    ) -> PriceBook:
        """Bundled records plus the rows of each override file (a ``UserError`` names the file and
        row of any bad one; rows of different files must not overlap either), plus
        ``extra_records`` made in code (the demo's free scripted model)."""
        overrides = [record for path in extra_files for record in load_override_file(path)]
        return cls(
            bundled_records() if include_bundled else (),
            overrides=[*overrides, *extra_records],
        )

    @property
    def records(self) -> tuple[PriceRecord, ...]:
        """Every record: overrides first, then bundled ones."""
        return self._overrides + self._bundled

    def lookup(self, model: str, provider: str | None = None, *, on: date) -> PriceRecord | None:
        """The record in force on day ``on`` for ``model`` (billed by ``provider``, when given),
        or ``None`` when the book cannot price it without guessing."""
        return self.resolve(model, provider, on=on).record

    def resolve(self, model: str, provider: str | None = None, *, on: date) -> Lookup:
        """Like :meth:`lookup`, with the reason when there is no record."""
        query = parse_model_id(model)
        wanted = normalise_provider(provider)
        for name in query.names:
            known = False
            for layer in self._layers:
                candidates = [
                    record
                    for record in layer.get(name, ())
                    if wanted is None or record.provider in (wanted, None)
                ]
                known = known or bool(candidates)
                in_force = [record for record in candidates if record.in_force(on)]
                if in_force:
                    return self._choose(model, in_force, wanted, query.provider_hints)
            if known:
                return Lookup(None, f"no price for {model!r} in force on {on.isoformat()}")
        return Lookup(None, self._why_unknown(model, query.names, wanted))

    def price(self, calls: Iterable[ModelCall], *, on: date) -> Pricing:
        """The cost of ``calls`` at the prices in force on day ``on``, each call at its own
        model's rates (see :mod:`harnessdrive.accounting.call_cost`)."""
        return price_calls(calls, lambda model, provider: self.resolve(model, provider, on=on), on)

    @staticmethod
    def _choose(
        model: str, in_force: list[PriceRecord], wanted: str | None, hints: tuple[str, ...]
    ) -> Lookup:
        if wanted is not None:
            exact = [record for record in in_force if record.provider == wanted]
            return Lookup((exact or in_force)[0])
        by_provider = {record.provider: record for record in in_force}
        if len(by_provider) == 1:
            return Lookup(in_force[0])
        for hint in hints:
            if hint in by_provider:
                return Lookup(by_provider[hint])
        providers = ", ".join(sorted(provider or "any" for provider in by_provider))
        return Lookup(
            None, f"{model!r} is priced by several providers ({providers}); name the provider"
        )

    def _why_unknown(self, model: str, names: tuple[str, ...], wanted: str | None) -> str:
        if wanted is not None:
            elsewhere = sorted(
                {
                    record.provider or "any"
                    for layer in self._layers
                    for name in names
                    for record in layer.get(name, ())
                }
            )
            if elsewhere:
                return (
                    f"{model!r} is priced only for provider {', '.join(elsewhere)}, not {wanted!r}"
                )
        return f"unknown model {model!r}: no price record (add one in a price override file)"
