"""What a run is charged: each rule of accounting/charge.py, and reconciliation at 2%."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from harnessdrive.accounting import PriceBook, PriceRecord, PriceSource, Rates
from harnessdrive.accounting.charge import (
    ChargePolicy,
    RunEnd,
    RunFacts,
    charge_run,
    exact,
    reconcile,
)
from harnessdrive.accounting.cost_range import CostRange
from harnessdrive.transcript import ModelCall, Usage

DAY = date(2026, 6, 15)
SOURCE = PriceSource(name="test-data", version="1")
MODEL = PriceRecord(
    provider=None,
    model="m",
    rates=Rates(
        input=Decimal(2),
        cache_read=Decimal("0.2"),
        cache_write_5m=Decimal("2.5"),
        cache_write_1h=Decimal(4),
        output=Decimal(10),
    ),
    source=SOURCE,
)
BOOK = PriceBook([], overrides=[MODEL])
ESTIMATE = CostRange(low=Decimal("0.1"), high=Decimal("1.5"), basis="assumption")
PRICED = ChargePolicy(priced=True, estimate=ESTIMATE)

# 10k input x 2 + 100k cache read x 0.2 + 1k output x 10 = 0.02 + 0.02 + 0.01
CALL = ModelCall(model="m", usage=Usage(input=10_000, cache_read=100_000, output=1_000))
CALL_USD = Decimal("0.05")
STRANGER = ModelCall(model="unknown-model", usage=Usage(input=1_000_000))


def facts(
    calls: tuple[ModelCall, ...] = (),
    reported: float | None = None,
    ended: RunEnd = "finished",
    billing: str | None = None,
) -> RunFacts:
    return RunFacts(calls=calls, reported_usd=reported, ended=ended, billing=billing)  # type: ignore[arg-type]


def charge(run: RunFacts, policy: ChargePolicy = PRICED):  # type: ignore[no-untyped-def]
    return charge_run(run, policy, BOOK, on=DAY)


def test_logged_calls_are_computed_and_the_harness_figure_kept_beside() -> None:
    found = charge(facts((CALL, CALL), reported=0.1))
    assert (found.source, found.usd, found.charged) == ("computed", 2 * CALL_USD, 2 * CALL_USD)
    assert found.reported == Decimal("0.1")
    assert found.reconciliation is not None and not found.reconciliation.flagged
    assert found.note is None
    assert found.pricing is not None and [r.id for r in found.pricing.records] == ["*/m@origin"]


@pytest.mark.parametrize(
    ("ours", "theirs", "flagged"),
    [
        ("1.02", "1", False),  # exactly 2% is within
        ("1.0201", "1", True),
        ("0.98", "1", False),
        ("0.9799", "1", True),
        ("0", "0", False),
        ("0.01", "0", True),
    ],
)
def test_reconciliation_flags_more_than_two_percent(ours: str, theirs: str, flagged: bool) -> None:
    found = reconcile(Decimal(ours), Decimal(theirs))
    assert found is not None and found.flagged is flagged
    if Decimal(theirs):
        assert found.difference == (Decimal(ours) - Decimal(theirs)) / Decimal(theirs)
    else:
        assert found.difference is None
    assert reconcile(Decimal(ours), None) is None


def test_a_flagged_difference_says_both_figures() -> None:
    found = charge(facts((CALL,), reported=0.06))
    assert found.reconciliation is not None and found.reconciliation.flagged
    assert found.note == "the harness reported $0.0600, ours is $0.0500: more than 2% apart"


def test_a_subscription_run_is_labelled_api_equivalent() -> None:
    found = charge(facts((CALL,), billing="subscription"))
    assert (found.source, found.usd, found.billing) == ("computed", CALL_USD, "subscription")
    assert found.note == "billed to a subscription: this is the API-equivalent cost"


def test_a_cut_off_run_with_calls_is_computed_partial_and_not_reconciled() -> None:
    found = charge(facts((CALL,), reported=9.0, ended="cut_off"))
    assert (found.source, found.usd, found.partial) == ("computed", CALL_USD, True)
    assert found.reconciliation is None


@pytest.mark.parametrize(
    ("ended", "source", "usd", "charged"),
    [
        ("cut_off", "estimated", Decimal("1.5"), Decimal("1.5")),
        ("finished", "unmeasured", None, Decimal("1.5")),
        ("did_not_work", "none", Decimal(0), Decimal(0)),
    ],
)
def test_no_usage_record(ended: RunEnd, source: str, usd: Decimal | None, charged: Decimal) -> None:
    found = charge(facts(ended=ended))
    assert (found.source, found.usd, found.charged) == (source, usd, charged)
    if charged:
        assert found.estimate == ESTIMATE
        assert found.note is not None and "charged the high estimate, $1.5000" in found.note


def test_the_harness_figure_counts_when_there_are_no_calls() -> None:
    found = charge(facts(reported=0.33, ended="cut_off"))
    assert (found.source, found.usd, found.charged) == ("reported", exact(0.33), exact(0.33))


def test_a_harness_that_names_no_model_is_not_measured() -> None:
    found = charge(facts(), ChargePolicy(priced=False))
    assert (found.source, found.usd, found.charged) == ("unmeasured", None, Decimal(0))


def test_an_unpriced_model_allowed_counts_only_the_priced_calls() -> None:
    policy = ChargePolicy(priced=True, allow_unpriced=True, estimate=ESTIMATE)
    found = charge(facts((CALL, STRANGER)), policy)
    assert (found.source, found.usd, found.charged) == ("unpriced", None, CALL_USD)
    assert found.note is not None and "no price for unknown-model" in found.note
    empty = charge(facts(), policy)
    assert (empty.source, empty.charged) == ("unpriced", Decimal(0))


def test_an_unpriced_model_not_allowed_counts_the_harness_figure_or_the_high_estimate() -> None:
    reported = charge(facts((CALL, STRANGER), reported=0.01))
    assert (reported.source, reported.usd, reported.charged) == (
        "reported",
        Decimal("0.01"),
        CALL_USD,  # never less than the calls we could price
    )
    unknown = charge(facts((CALL, STRANGER)))
    assert (unknown.source, unknown.usd, unknown.charged) == ("unpriced", None, Decimal("1.5"))


def test_a_model_priced_at_zero_is_not_reconciled_with_the_harness_list_price() -> None:
    # A scripted or local model costs nothing; the harness's own figure is its list price of
    # whatever model id it was given, so comparing the two would flag every run.
    free = MODEL.model_copy(
        update={
            "model": "free",
            "rates": Rates(input=0, cache_read=0, cache_write_5m=0, cache_write_1h=0, output=0),
        }
    )
    book = PriceBook([], overrides=[MODEL, free])
    found = charge_run(
        facts((ModelCall(model="free", usage=CALL.usage),), reported=0.05), PRICED, book, on=DAY
    )
    assert (found.source, found.usd, found.reconciliation) == ("computed", Decimal(0), None)
    priced = charge_run(facts((CALL,), reported=0.5), PRICED, book, on=DAY)
    assert priced.reconciliation is not None and priced.reconciliation.flagged
