"""Paid Claude Code trials of one arm share one configuration hash: each is handed what is left
of the run's spend cap (``--max-budget-usd``), which differs from trial to trial by design, and
is left out of the hash. The real CLI runs against the scripted model, priced so each trial
spends."""

from __future__ import annotations

import dataclasses
from datetime import date
from decimal import Decimal

import pytest

from harnessdrive.accounting import PriceRecord, PriceSource, Rates
from harnessdrive.report.provenance import provenance_differences
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.model_server import ModelServer
from tests.cli.conftest import cli_binary, endpoint_for, run_trials
from tests.cli.test_adapters_live import MODELS, SCRIPT, TASK

pytestmark = pytest.mark.cli

PRICE = PriceRecord(
    provider="scripted",
    model=MODELS["claude"],
    rates=Rates(
        input=Decimal(30),
        cache_read=Decimal(3),
        cache_write_5m=Decimal("37.5"),
        cache_write_1h=Decimal(60),
        output=Decimal(150),
    ),
    valid_from=date(2025, 1, 1),
    source=PriceSource(name="harnessdrive configuration hash test"),
)


def test_paid_claude_trials_of_one_arm_share_one_configuration_hash(
    tmp_path: pytest.TempPathFactory,
) -> None:
    tasks = [TASK, dataclasses.replace(TASK, id="create-edit-run-again")]
    with ModelServer() as server:
        endpoints = server.mount("claude", SCRIPT)
        variant = VariantSpec(
            harness="claude",
            model=MODELS["claude"],
            options={
                "binary": str(cli_binary("claude")),
                "endpoint": endpoint_for(endpoints.root),
            },
        )
        _, records = run_trials(tmp_path, tasks, [variant], price_records=(PRICE,), max_usd=5.0)
    results = sorted((r.result for r in records), key=lambda r: r.started)
    assert [(r.status, r.outcome) for r in results] == [("completed", "pass")] * 2
    # The first trial spent, so the second was handed a smaller cap than the first.
    assert results[0].cost.charged_usd > 0
    hashes = {r.provenance.config_hash for r in results if r.provenance is not None}
    assert len(hashes) == 1 and None not in hashes
    parts = [r.provenance.config_parts for r in results if r.provenance is not None]
    assert "--max-budget-usd" in parts[0] and parts[0] == parts[1]
    assert [d.field for d in provenance_differences(results, results)] == []
