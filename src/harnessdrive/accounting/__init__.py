"""Money: dated price records, the price book, and the cost of model calls.

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
