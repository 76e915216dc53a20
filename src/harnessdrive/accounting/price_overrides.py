"""User price files: TOML rows that add or replace price records (format in docs/pricing.md)."""

from __future__ import annotations

import tomllib
from collections import defaultdict
from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from os import PathLike, fspath
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harnessdrive.accounting.price_records import PriceRecord, PriceSource, Rates
from harnessdrive.errors import UserError

USER_SOURCE_NAME = "user config"


class _Row(BaseModel):
    """One ``[[price]]`` table as written; rates in USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: str | None = None
    model: str
    aliases: tuple[str, ...] = ()
    input: Decimal
    output: Decimal
    cache_read: Decimal | None = None
    cache_write_5m: Decimal | None = None
    cache_write_1h: Decimal | None = None
    long_context_threshold: int | None = Field(default=None, gt=0)
    long_input: Decimal | None = None
    long_output: Decimal | None = None
    long_cache_read: Decimal | None = None
    long_cache_write_5m: Decimal | None = None
    long_cache_write_1h: Decimal | None = None
    valid_from: date | None = None
    valid_to: date | None = None

    def base_rates(self) -> Rates:
        return _rates(
            self.input, self.output, self.cache_read, self.cache_write_5m, self.cache_write_1h
        )

    def long_rates(self) -> Rates | None:
        given = {
            name: value
            for name in (
                "long_input",
                "long_output",
                "long_cache_read",
                "long_cache_write_5m",
                "long_cache_write_1h",
            )
            if (value := getattr(self, name)) is not None
        }
        if self.long_context_threshold is None:
            if given:
                raise ValueError(f"{', '.join(given)} need long_context_threshold")
            return None
        if self.long_input is None or self.long_output is None:
            raise ValueError("long_context_threshold needs long_input and long_output")
        return _rates(
            self.long_input,
            self.long_output,
            self.long_cache_read,
            self.long_cache_write_5m,
            self.long_cache_write_1h,
        )


def _rates(
    input_rate: Decimal,
    output: Decimal,
    cache_read: Decimal | None,
    cache_write_5m: Decimal | None,
    cache_write_1h: Decimal | None,
) -> Rates:
    # A rate left out bills those tokens at the rate above it: never cheaper than stated.
    write_5m = input_rate if cache_write_5m is None else cache_write_5m
    return Rates(
        input=input_rate,
        cache_read=input_rate if cache_read is None else cache_read,
        cache_write_5m=write_5m,
        cache_write_1h=write_5m if cache_write_1h is None else cache_write_1h,
        output=output,
    )


def _one_line(error: ValidationError) -> str:
    parts = []
    for detail in error.errors():
        where = ".".join(str(part) for part in detail["loc"])
        parts.append(f"{where}: {detail['msg']}" if where else str(detail["msg"]))
    return "; ".join(parts)


def parse_row(raw: Any, source: PriceSource) -> PriceRecord:
    """One TOML row as a record (raises ``ValueError`` with a one-line reason)."""
    if not isinstance(raw, dict):
        raise ValueError("a [[price]] entry must be a table")
    try:
        row = _Row.model_validate(raw)
        return PriceRecord(
            provider=row.provider,
            model=row.model,
            aliases=row.aliases,
            rates=row.base_rates(),
            long_context_threshold=row.long_context_threshold,
            long_context_rates=row.long_rates(),
            valid_from=row.valid_from,
            valid_to=row.valid_to,
            source=source,
        )
    except ValidationError as error:
        raise ValueError(_one_line(error)) from None


def load_override_file(path: str | PathLike[str]) -> tuple[PriceRecord, ...]:
    """The records of one user price file; any problem is a ``UserError`` naming file and row."""
    name = fspath(path)
    try:
        with Path(path).open("rb") as handle:
            data = tomllib.load(handle, parse_float=Decimal)
    except OSError as error:
        raise UserError(f"{name}: cannot read price file: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise UserError(f"{name}: not valid TOML: {error}") from None
    unknown = sorted(set(data) - {"price"})
    if unknown:
        raise UserError(
            f"{name}: unknown key(s) {', '.join(unknown)}; a price file holds [[price]] rows only"
        )
    rows = data.get("price", [])
    if not isinstance(rows, list):
        raise UserError(f"{name}: 'price' must be written as [[price]] tables")
    records = []
    for number, raw in enumerate(rows, start=1):
        label = raw.get("model") if isinstance(raw, dict) else None
        source = PriceSource(name=USER_SOURCE_NAME, file=name, row=number)
        try:
            records.append(parse_row(raw, source))
        except ValueError as error:
            which = f"price row {number}" + (f" (model {label!r})" if label else "")
            raise UserError(f"{name}: {which}: {error}") from None
    check_no_overlap(records)
    return tuple(records)


def check_no_overlap(records: Iterable[PriceRecord]) -> None:
    """Refuse two records that would both price one name for one provider on the same day."""
    by_key: dict[tuple[str | None, str], list[PriceRecord]] = defaultdict(list)
    for record in records:
        for name in record.names:
            by_key[(record.provider, name)].append(record)
    for (provider, name), group in by_key.items():
        for position, first in enumerate(group):
            for second in group[position + 1 :]:
                if first is not second and first.overlaps(second):
                    message = _overlap_message(first, second, provider, name)
                    if USER_SOURCE_NAME in (first.source.name, second.source.name):
                        raise UserError(message)
                    raise ValueError(message)


def _overlap_message(
    first: PriceRecord, second: PriceRecord, provider: str | None, name: str
) -> str:
    what = f"both price {name} for {provider or 'any provider'} on overlapping days"
    one, other = first.source, second.source
    if one.file is not None and one.file == other.file:
        return f"{one.file}: price rows {one.row} and {other.row} {what}"
    return f"price records overlap: {one.label} and {other.label} {what}"
