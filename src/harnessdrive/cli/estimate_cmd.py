"""``harnessdrive estimate``: what a run would cost, before it runs."""

from __future__ import annotations

from harnessdrive.accounting import PriceBook
from harnessdrive.accounting.estimate_table import render_estimate
from harnessdrive.accounting.plan_pricing import today
from harnessdrive.accounting.run_estimate import build_estimate
from harnessdrive.cli import options as opt
from harnessdrive.cli.flags import with_flags
from harnessdrive.cli.output import stdout
from harnessdrive.cli.variants import resolve_variants, split_names
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import is_done
from harnessdrive.tasks.loading import load_suite


def estimate(
    suite: opt.SuiteArgument,
    harness: opt.HarnessOption = None,
    repeat: opt.RepeatOption = 1,
    results: opt.ResultsOption = opt.DEFAULT_RESULTS,
    cmd: opt.CmdOption = None,
    model: opt.ModelOption = None,
    allow_unpriced: opt.AllowUnpricedOption = None,
    prices: opt.PricesOption = None,
    json_output: opt.JsonOption = False,
) -> None:
    """Estimate what a run would cost, per harness and in total, without running anything."""
    loaded = load_suite(suite)
    variants = resolve_variants(loaded, harness or [], commands=cmd or [], models=model or [])
    plan = make_plan(loaded, variants, repeat)
    found = build_estimate(
        plan,
        PriceBook.load(tuple(prices or ())),
        results.resolve(),
        stands=is_done,
        on=today(),
        allow_unpriced=frozenset(split_names(allow_unpriced or [])),
    )
    if json_output:
        print(found.to_json())
    else:
        stdout().print(render_estimate(found, with_settings=with_flags))
