"""Regenerate harnessdrive's bundled price records from the pinned genai-prices package.

    pip install -e '.[prices]'
    python scripts/generate_prices.py           # rewrites the bundled data/prices.json
    python scripts/generate_prices.py --check   # exit 1 if that file is not what it would write

Offline: it reads the data module that ships inside the installed package and nothing else. The
output depends only on the package version and this script, so the same pin always gives the same
bytes. To move the pin: change PINNED_VERSION and SNAPSHOT_DATE here, the pins in pyproject.toml,
then run the script and review the diff.

Conversion rules (docs/pricing.md explains them to users):
- only first-party models of the providers in PROVIDERS: a model that another listed provider's
  name pattern claims (Claude on Google's list, say) is left to that provider;
- only models with both an input and an output price per million tokens; audio, image, web-search
  and per-request fees are not carried over;
- standard interactive prices only: batch, flex and priority variants are ignored;
- dated price changes become consecutive records ``[valid_from, valid_to)``, chosen the way the
  package chooses them on each day; models priced by time of day are skipped;
- a rate the package leaves out is billed the way the package bills it: cache reads and 5-minute
  cache writes at the input rate, 1-hour cache writes at the cache-write rate;
- a single long-context tier (the package's TieredPrices) becomes the long-context threshold and
  rates; flat rates keep their value above the threshold;
- names are the package's model id and the literal text of its match rules (equals, starts-with,
  ends-with, contains), each kept only if the package itself prices that exact name as this model;
  the id comes first when kept (it is a label, not an API name, for a few models), the rest are
  aliases; regular-expression rules are not turned into names.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from importlib.metadata import version
from pathlib import Path
from typing import Any

from harnessdrive.accounting.bundled_prices import dump_records
from harnessdrive.accounting.price_records import PriceRecord, PriceSource, Rates

PACKAGE = "genai-prices"
PINNED_VERSION = "0.2.3"
SNAPSHOT_DATE = date(2026, 11, 29)
"""The day PINNED_VERSION was pinned and reviewed (not the day the script ran)."""

PROVIDERS = ("anthropic", "openai", "google", "deepseek", "mistral", "x-ai", "moonshotai", "zai")

DEFAULT_OUTPUT = (
    Path(__file__).resolve().parent.parent
    / "src"
    / "harnessdrive"
    / "accounting"
    / "data"
    / "prices.json"
)

_CLEAN_NAME = re.compile(r"^[a-z0-9][a-z0-9._:-]*[a-z0-9]$")


class Skip(Exception):
    """A model that cannot be represented without guessing."""


@dataclass(frozen=True)
class Converted:
    rates: Rates
    threshold: int | None
    long_rates: Rates | None


def _literal_names(clause: Any) -> Iterator[str]:
    """Exact names stated in a match rule (see the module docstring)."""
    from genai_prices import types as gp

    if isinstance(clause, gp.ClauseOr):
        for inner in clause.or_:
            yield from _literal_names(inner)
    elif isinstance(clause, gp.ClauseEquals):
        yield clause.equals.lower()
    elif isinstance(clause, gp.ClauseStartsWith):
        yield clause.starts_with.lower()
    elif isinstance(clause, gp.ClauseEndsWith):
        yield clause.ends_with.lower()
    elif isinstance(clause, gp.ClauseContains):
        yield clause.contains.lower()


def _split(value: Any) -> tuple[Decimal | None, Decimal | None, int | None]:
    """(base rate, long rate, threshold) of one package price."""
    from genai_prices import types as gp

    if value is None:
        return None, None, None
    if isinstance(value, gp.TieredPrices):
        if len(value.tiers) != 1:
            raise Skip(f"{len(value.tiers)} price tiers")
        tier = value.tiers[0]
        return value.base, tier.price, tier.start
    if isinstance(value, Decimal):
        return value, value, None
    raise Skip(f"unexpected price value {value!r}")


def convert_price(model_price: Any) -> Converted:
    """Our rates for one package ModelPrice."""
    fields = {
        key: _split(getattr(model_price, key, None))
        for key in (
            "input_mtok",
            "output_mtok",
            "cache_read_mtok",
            "cache_write_mtok",
            "cache_write_5m_mtok",
            "cache_write_1h_mtok",
        )
    }
    if fields["input_mtok"][0] is None or fields["output_mtok"][0] is None:
        raise Skip("no input and output price per million tokens")
    thresholds = {threshold for _, _, threshold in fields.values() if threshold is not None}
    if len(thresholds) > 1:
        raise Skip(f"several long-context thresholds {sorted(thresholds)}")
    threshold = thresholds.pop() if thresholds else None

    def pick(*keys: str, long: bool) -> Decimal:
        # The first key that has a price: the package bills a tier it does not price at its parent.
        for key in keys:
            base, above, _ = fields[key]
            if base is not None and above is not None:
                return above if long else base
        raise AssertionError("input_mtok is always priced here")

    def rates(long: bool) -> Rates:
        return Rates(
            input=pick("input_mtok", long=long),
            cache_read=pick("cache_read_mtok", "input_mtok", long=long),
            cache_write_5m=pick("cache_write_5m_mtok", "cache_write_mtok", "input_mtok", long=long),
            cache_write_1h=pick("cache_write_1h_mtok", "cache_write_mtok", "input_mtok", long=long),
            output=pick("output_mtok", long=long),
        )

    if threshold is None:
        return Converted(rates(long=False), None, None)
    return Converted(rates(long=False), threshold, rates(long=True))


def dated_prices(model: Any) -> list[tuple[date | None, date | None, Any]]:
    """The package's prices for a model as consecutive spans ``[start, end)``.

    On each day the package uses the last conditional price whose start date has come (or that
    has none), and the first one when none qualifies; spans are cut at every start date.
    """
    from genai_prices import types as gp

    if isinstance(model.prices, gp.ModelPrice):
        return [(None, None, model.prices)]
    conditionals = list(model.prices)
    if not conditionals:
        raise Skip("no prices")
    starts: set[date] = set()
    for conditional in conditionals:
        constraint = conditional.constraint
        if isinstance(constraint, gp.TimeOfDateConstraint):
            raise Skip("prices depend on the time of day")
        if isinstance(constraint, gp.StartDateConstraint):
            starts.add(constraint.start_date)

    def active(on: date | None) -> Any:
        for conditional in reversed(conditionals):
            constraint = conditional.constraint
            if constraint is None or (on is not None and constraint.start_date <= on):
                return conditional.prices
        return conditionals[0].prices

    bounds: list[date | None] = [None, *sorted(starts)]
    return [
        (start, bounds[index + 1] if index + 1 < len(bounds) else None, active(start))
        for index, start in enumerate(bounds)
    ]


def accepted_names(model: Any, provider: Any) -> tuple[str, list[str]]:
    """The canonical id and aliases: every literal name (the package id first) for which the
    package itself picks this model, so that no name prices what the package would not."""
    candidates = [model.id.lower(), *sorted(set(_literal_names(model.match)))]
    accepted: list[str] = []
    for name in candidates:
        if name not in accepted and _CLEAN_NAME.match(name) and provider.find_model(name) is model:
            accepted.append(name)
    if not accepted:
        raise Skip("the package accepts none of its literal names")
    return accepted[0], accepted[1:]


def convert_model(model: Any, provider: Any, source: PriceSource) -> list[PriceRecord]:
    spans: list[tuple[date | None, date | None, Converted]] = []
    for start, end, model_price in dated_prices(model):
        converted = convert_price(model_price)
        if spans and spans[-1][2] == converted:
            # The package changed a price we do not carry (a web-search fee, say): one record.
            spans[-1] = (spans[-1][0], end, converted)
        else:
            spans.append((start, end, converted))
    model_id, aliases = accepted_names(model, provider)
    return [
        PriceRecord(
            provider=provider.id,
            model=model_id,
            aliases=tuple(aliases),
            rates=converted.rates,
            long_context_threshold=converted.threshold,
            long_context_rates=converted.long_rates,
            valid_from=start,
            valid_to=end,
            source=source,
        )
        for start, end, converted in spans
    ]


def convert(providers: Sequence[Any], source: PriceSource) -> tuple[list[PriceRecord], list[str]]:
    """All records for PROVIDERS, and a note for each model left out."""
    selected = [provider for provider in providers if provider.id in PROVIDERS]
    missing = set(PROVIDERS) - {provider.id for provider in selected}
    if missing:
        raise SystemExit(f"{PACKAGE} {PINNED_VERSION} has no provider {sorted(missing)}")
    records: list[PriceRecord] = []
    notes: list[str] = []
    for provider in selected:
        for model in provider.models:
            model_id = model.id.lower()
            owner = next(
                (
                    other.id
                    for other in selected
                    if other.id != provider.id
                    and other.model_match is not None
                    and other.model_match.is_match(model_id)
                ),
                None,
            )
            if owner is not None:
                notes.append(f"{provider.id}/{model_id}: left to {owner}")
                continue
            if not _CLEAN_NAME.match(model_id):
                notes.append(f"{provider.id}/{model_id}: a name pattern, not a model id")
                continue
            try:
                records.extend(convert_model(model, provider, source))
            except Skip as why:
                notes.append(f"{provider.id}/{model_id}: {why}")
    return records, notes


def generate() -> tuple[str, list[str]]:
    """The bundled file's text and the notes, from the installed package."""
    installed = version(PACKAGE)
    if installed != PINNED_VERSION:
        raise SystemExit(
            f"{PACKAGE} {installed} is installed but the pin is {PINNED_VERSION}: "
            f"pip install '{PACKAGE}=={PINNED_VERSION}' (or move the pin, see this script's help)"
        )
    from genai_prices.data import providers

    source = PriceSource(name=PACKAGE, version=PINNED_VERSION, snapshot_date=SNAPSHOT_DATE)
    records, notes = convert(providers, source)
    return dump_records(records, source), notes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="file to write")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if the file differs"
    )
    parser.add_argument("--verbose", action="store_true", help="list every model left out")
    args = parser.parse_args(argv)
    text, notes = generate()
    if args.verbose:
        for note in notes:
            print(f"left out: {note}", file=sys.stderr)
    if args.check:
        current = args.output.read_text("utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date; run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(text.encode("utf-8"))
    records = text.count("\n  {")
    print(f"wrote {records} records to {args.output} ({len(notes)} notes; --verbose lists them)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
