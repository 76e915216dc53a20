"""What ``harnessdrive demo`` runs: the bundled suite, built-in agents and, on request, real CLIs
against scripted models on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

from harnessdrive.accounting.price_records import PriceRecord
from harnessdrive.demo import DEMO_SUITE
from harnessdrive.demo.scripted import REAL_CLIS, scripted_demo, scripted_prices
from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.running.plan import Plan, make_plan
from harnessdrive.sandbox.runner import Network
from harnessdrive.tasks.loading import Suite, load_suite
from harnessdrive.tasks.models import VariantSpec


@dataclass(frozen=True)
class DemoRun:
    plan: Plan
    network: Network
    """``loopback`` when real CLIs talk to the scripted models; they need nothing else."""
    prices: tuple[PriceRecord, ...]
    """The scripted models' prices: zero, so the demo needs no spend cap."""


VariantsNamed = Callable[[Suite, Sequence[str]], tuple[VariantSpec, ...]]
"""Names -> the suite's variants they mean (its defaults when empty); the front end's rules."""


@contextmanager
def demo_run(
    names: Sequence[str],
    *,
    python: str,
    resolve: VariantsNamed,
    tasks: Sequence[str] = (),
) -> Iterator[DemoRun]:
    """The demo's plan for ``names`` (the suite's built-in agents when empty), in that order,
    on the demo tasks named in ``tasks`` (every one when empty).

    Real CLIs among the names get a scripted model server for the length of the block; the
    others are resolved by ``resolve``.
    """
    suite = only_tasks(load_suite(DEMO_SUITE), tasks)
    real = [name for name in names if name in REAL_CLIS]
    with scripted_demo(suite, real, python=python) as scripted:
        by_name = {variant.harness: variant for variant in scripted}
        others = iter(resolve(suite, [n for n in names if n not in by_name]))
        variants = tuple(by_name[n] if n in by_name else next(others) for n in names) or tuple(
            others
        )
        yield DemoRun(
            plan=make_plan(suite, variants, 1),
            network="loopback" if real else "host",
            prices=scripted_prices() if real else (),
        )


def only_tasks(suite: Suite, ids: Sequence[str]) -> Suite:
    """``suite`` with only the tasks ``ids`` names (all of them when it names none)."""
    known = [task.id for task in suite.tasks]
    for task_id in ids:
        if task_id not in known:
            raise UserError(
                f"suite {suite.name} has no task {task_id!r}{did_you_mean(task_id, known)}; "
                f"its tasks: {', '.join(known)}"
            )
    if not ids:
        return suite
    return replace(suite, tasks=tuple(task for task in suite.tasks if task.id in ids))
