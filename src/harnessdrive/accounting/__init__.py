"""Money, and only here: dated price records and the price book, the cost of model calls, what
each trial is charged and how ``result.json`` records it, each variant's prices before a run, the
estimate of a run (and its table), and the spend cap with its gate between trials.

    book = PriceBook.load(extra_files=["prices.toml"])
    pricing = book.price(transcript.calls, on=date(2026, 11, 29))
    pricing.total_usd        # None when some model is unpriced
    pricing.unpriced_models  # the ids the book refused to guess

See docs/pricing.md.
"""

from harnessdrive.accounting.call_cost import (
    CallCost,
    Lookup,
    Pricing,
    TierCosts,
    UnpricedModel,
    tier_costs,
    to_usd,
)
from harnessdrive.accounting.price_book import PriceBook
from harnessdrive.accounting.price_records import PriceRecord, PriceSource, Rates

__all__ = [
    "CallCost",
    "Lookup",
    "PriceBook",
    "PriceRecord",
    "PriceSource",
    "Pricing",
    "Rates",
    "TierCosts",
    "UnpricedModel",
    "tier_costs",
    "to_usd",
]
