"""The bundled price file: its exact text layout, reading and writing.

The layout is fixed so that the same records always give the same bytes: a small header, then one
record per line, records sorted by (provider, model, valid_from), keys in a fixed order, rates as
plain decimal strings (``"3.75"``, never floats), empty fields left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date
from functools import cache
from importlib import resources
from typing import Any

from harnessdrive.accounting.price_records import PriceRecord, PriceSource, Rates, plain_decimal

FORMAT = 1
BUNDLED_RESOURCE = "data/prices.json"
_UNITS = "USD per million tokens"


def _rates_json(rates: Rates) -> dict[str, str]:
    return {name: plain_decimal(value) for name, value in rates.model_dump().items()}


def record_json(record: PriceRecord) -> dict[str, Any]:
    """One record as the file stores it (the source lives in the header)."""
    data: dict[str, Any] = {"provider": record.provider, "model": record.model}
    if record.aliases:
        data["aliases"] = list(record.aliases)
    data["rates"] = _rates_json(record.rates)
    if record.long_context_threshold is not None and record.long_context_rates is not None:
        data["long_context_threshold"] = record.long_context_threshold
        data["long_context_rates"] = _rates_json(record.long_context_rates)
    if record.valid_from is not None:
        data["valid_from"] = record.valid_from.isoformat()
    if record.valid_to is not None:
        data["valid_to"] = record.valid_to.isoformat()
    return data


def _sort_key(record: PriceRecord) -> tuple[str, str, date]:
    return (record.provider or "", record.model, record.valid_from or date.min)


def dump_records(records: Iterable[PriceRecord], source: PriceSource) -> str:
    """The full text of a price file holding ``records``, all from ``source``."""
    header = {
        "format": FORMAT,
        "source": source.model_dump(mode="json", exclude_none=True),
        "units": _UNITS,
    }
    lines = ["{"]
    for key, value in header.items():
        lines.append(f" {json.dumps(key)}: {json.dumps(value, sort_keys=True)},")
    lines.append(' "records": [')
    rows = [
        json.dumps(record_json(record), separators=(",", ":"))
        for record in sorted(records, key=_sort_key)
    ]
    lines.append(",\n".join(f"  {row}" for row in rows))
    lines.append(" ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def load_records(text: str) -> tuple[PriceRecord, ...]:
    """Parse a price file written by :func:`dump_records`."""
    data = json.loads(text)
    if data.get("format") != FORMAT:
        raise ValueError(f"price file format {data.get('format')!r}, expected {FORMAT}")
    source = PriceSource.model_validate(data["source"])
    return tuple(PriceRecord.model_validate({**row, "source": source}) for row in data["records"])


@cache
def bundled_records() -> tuple[PriceRecord, ...]:
    """The records shipped inside the package (parsed once per process)."""
    text = resources.files("harnessdrive.accounting").joinpath(BUNDLED_RESOURCE).read_text("utf-8")
    return load_records(text)
