"""Shared set-up of the spend tests: fast tasks, scripted spenders, a price file, a run."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harnessdrive.cli.variants import resolve_variants
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, RunSummary, execute
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.prices import (
    MOCK_PRICES_TOML,
    MOCK_SMALL_HIGH_USD,
    MOCK_SMALL_LOW_USD,
    write_mock_prices,
)
from harnessdrive.testing.suites import TaskFiles, write_suite
from tests.trial_results import trial_folder

SPENDER = "harnessdrive.testing.agents:SpendingAgent"

SMALL_HIGH = MOCK_SMALL_HIGH_USD
SMALL_LOW = MOCK_SMALL_LOW_USD


def fast_task(task_id: str) -> TaskFiles:
    """A task graded by one python -c (no pytest start-up)."""
    return TaskFiles(
        task_id,
        files={"calc.py": "def add(a, b):\n    return a - b\n"},
        solution={"calc.py": "def add(a, b):\n    return a + b\n"},
        command="{python} -c 'import calc; assert calc.add(1, 2) == 3'",
        agent_timeout=30,
    )


def spender(name: str, model: str | None = None, **options: Any) -> dict[str, Any]:
    variant: dict[str, Any] = {"harness": SPENDER, "name": name, "options": options}
    if model is not None:
        variant["model"] = model
    return variant


def small_calls(usd: float) -> list[dict[str, Any]]:
    """One mock-small call costing exactly ``usd`` (uncached input at $1 per million)."""
    return [{"model": "mock-small", "input": round(usd * 1_000_000)}]


def write_prices(folder: Path, text: str = MOCK_PRICES_TOML) -> Path:
    return write_mock_prices(folder, text)


def make_suite(
    folder: Path, variants: Sequence[Mapping[str, Any] | str], tasks: int = 1, name: str = "suite"
) -> Path:
    return write_suite(
        folder, [fast_task(f"t{i}") for i in range(tasks)], variants=variants, name=name
    )


def run_suite(
    suite: Path, results: Path, *, prices: Path | None = None, **options: Any
) -> RunSummary:
    loaded = load_suite(suite)
    plan = make_plan(loaded, resolve_variants(loaded, []), options.pop("repeat", 1))
    run_options = RunOptions(
        results=results,
        sandbox="none",
        python=sys.executable,
        price_files=(prices,) if prices else (),
        **options,
    )
    return execute(plan, run_options)


def result_json(results: Path, trial_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((trial_folder(results, trial_id) / "result.json").read_text())
    return data


def by_task(summary: RunSummary) -> dict[str, TrialResult]:
    return {f"{r.task}/{r.variant_label}": r for r in summary.trials}
