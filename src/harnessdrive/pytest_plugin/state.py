"""What one pytest process knows about its eval session: the options, the harnesses and prices
looked up once, and the checks that stop collection before anything runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.accounting import PriceBook
from harnessdrive.accounting.catalogue import Catalogue
from harnessdrive.accounting.plan_pricing import VariantPricing, price_variants, today
from harnessdrive.errors import BudgetError, UserError, did_you_mean
from harnessdrive.harnesses.base import Harness, HarnessInfo
from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.registry import check_options, get_harness
from harnessdrive.matrix.resolve import resolve_matrix
from harnessdrive.pytest_plugin.case import EvalCase
from harnessdrive.pytest_plugin.cell_run import SessionSettings
from harnessdrive.pytest_plugin.layout import TREATMENTS, CaseFiles
from harnessdrive.pytest_plugin.matrix import (
    Cell,
    default_matrix,
    expand,
    parse_entry,
    scope_for,
    selected,
)
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store
from harnessdrive.tasks.models import VariantSpec

STATE_KEY = pytest.StashKey["EvalState"]()


@dataclass
class EvalState:
    config: pytest.Config
    settings: SessionSettings
    build: Path
    dry_run: bool
    record_goldens: bool
    skills_dir: Path
    replay_from: Path | None = None
    """``--replay``: the stored session (or results, or trial folder) the cells are read from."""
    stored: dict[Any, Any] | None = None
    """The trials found under ``replay_from``, read on the first replayed cell."""
    harnesses: dict[str, Harness] = field(default_factory=dict)
    pricing: dict[str, VariantPricing] = field(default_factory=dict)
    scopes: dict[str, str] = field(default_factory=dict)
    _book: PriceBook | None = None
    _history: list[TrialResult] | None = None
    _catalogue: Catalogue | None = None

    def harness(self, name: str) -> Harness:
        if name not in self.harnesses:
            self.harnesses[name] = get_harness(name)
        return self.harnesses[name]

    @property
    def book(self) -> PriceBook:
        if self._book is None:
            self._book = PriceBook.load(self.settings.price_files)
        return self._book

    @property
    def catalogue(self) -> Catalogue:
        """The price book's models with their lines, tiers and published dates, and the
        project's own ``harnessdrive_models`` lines over them."""
        if self._catalogue is None:
            models = ((r.model, r.provider) for r in self.book.records)
            lines = self.config.getini("harnessdrive_models")
            self._catalogue = Catalogue.of(models).with_lines(lines)
        return self._catalogue

    def model_lines(self) -> list[str]:
        """What the catalogue knows of each model this session priced, one line each."""
        models = sorted({p.variant.model for p in self.pricing.values() if p.variant.model})
        lines = []
        for model in models:
            entry = self.catalogue.get(model)
            lines.append(entry.describe() if entry else f"{model}: not in the catalogue")
        return lines

    @property
    def history(self) -> list[TrialResult]:
        """Every trial recorded by earlier sessions, for the forecast of the same cell."""
        if self._history is None:
            self._history = []
            root = self.settings.session_folder.parent
            if root.is_dir():
                for session in sorted(root.iterdir()):
                    for folder in sorted(session.glob("*/trials")):
                        store = Store(folder.parent)
                        try:
                            self._history += store.all_latest()
                        finally:
                            store.close()
        return self._history

    def price(self, variant: VariantSpec, task: str) -> VariantPricing:
        """The variant's prices and per-trial range; an unpriced model is refused."""
        key = f"{task}\0{variant.model_dump_json()}"
        if key not in self.pricing:
            harness = self.harness(variant.harness)
            past = [r for r in self.history if r.task == task]
            # History by model and effort: a cell at 'max' is forecast from runs at 'max'
            # once there are any (the range then stops being the same for every effort).
            same_effort = [r for r in past if r.variant.effort == variant.effort]
            past = same_effort or past
            found = price_variants(
                [variant],
                {variant.harness: harness},
                self.book,
                on=today(),
                history=past,
                infos={variant.harness: unprobed_info(harness)},
            ).for_variant(variant)
            assert found is not None
            refusal = found.refusal()
            if refusal:
                known = self.catalogue.models()
                hint = did_you_mean(variant.model, known) if variant.model else ""
                raise UserError(
                    f"cannot price {refusal}{hint}; if the model is right, add a [[price]] row "
                    "for it to a price file (--prices FILE or the harnessdrive_prices ini key)"
                )
            self.pricing[key] = found
        return self.pricing[key]

    def cells(self, case: EvalCase, files: CaseFiles, options: dict[str, Any]) -> list[Cell]:
        default = default_matrix(self.catalogue, {r.model for r in self.book.records})
        scope = scope_for(case, self.config.getini("harnessdrive_matrix"), default)
        self.scopes[files.name] = scope.name
        variants, spenders = [], []
        for entry in scope.entries:
            variant = parse_entry(entry, self.harness)
            check_options(variant)
            self.harness(variant.harness).check_variant(variant)
            pricing = self.price(variant, task=files.task_id)
            if pricing.priced and not pricing.free:
                spenders.append(variant.label)
            variants.append(variant)
        repeat = options["repeat"] or case.repeat
        cells = expand(variants, case.treatments, repeat, files.eval_dir / TREATMENTS)
        checked: set[tuple[str, str]] = set()
        for cell in cells:
            arm = (cell.variant.harness, cell.treatment or "")
            if cell.treatment and arm not in checked:
                resolve_matrix([cell.variant], files.eval_dir)  # refuses a treatment it lacks
                checked.add(arm)
        spends = not (self.dry_run or self.replay_from is not None)
        if spenders and self.settings.max_usd is None and spends:
            raise BudgetError(
                f"{', '.join(spenders)} spend money on model tokens: set a spend cap for the "
                "session with --max-usd (see the forecast with --dry-run)"
            )
        return [
            c
            for c in cells
            if selected(
                c, options["harness"], options["model"], options["effort"], options["treatment"]
            )
        ]


def unprobed_info(harness: Harness) -> HarnessInfo:
    """What pricing needs of a harness (does it use a model?) without asking a CLI its
    version, which starts it: collection, a dry run and a replay start no CLI."""
    if isinstance(harness, AgentCli):
        return HarnessInfo(name=harness.name, installed=False, uses_model=True, detail="unprobed")
    return harness.info()


def worker_id(config: pytest.Config) -> str:
    workerinput = getattr(config, "workerinput", None)
    return str(workerinput["workerid"]) if workerinput else "main"


def build_state(config: pytest.Config, session: str) -> EvalState:
    root = Path(str(config.rootpath))
    results = Path(config.getoption("eval_results") or config.getini("harnessdrive_results"))
    results = results if results.is_absolute() else root / results
    prices = [*config.getoption("eval_prices"), *config.getini("harnessdrive_prices")]
    settings = SessionSettings(
        session_folder=results / session,
        worker=worker_id(config),
        max_usd=config.getoption("eval_max_usd"),
        price_files=tuple(p if Path(p).is_absolute() else root / p for p in map(Path, prices)),
        sandbox=config.getoption("eval_sandbox"),
        network=config.getoption("eval_network"),
    )
    skills = Path(config.getini("harnessdrive_skills_dir"))
    return EvalState(
        config=config,
        settings=settings,
        build=results / ".build" / session / settings.worker,
        dry_run=bool(config.getoption("eval_dry_run")),
        record_goldens=bool(config.getoption("record_goldens")),
        skills_dir=skills if skills.is_absolute() else root / skills,
        replay_from=_replay_source(config.getoption("eval_replay"), root),
    )


def _replay_source(value: str | None, root: Path) -> Path | None:
    """The ``--replay`` folder (checked at configure time), resolved."""
    if not value:
        return None
    path = Path(value).expanduser()
    return (path if path.is_absolute() else Path.cwd() / path).resolve()


def narrowing(config: pytest.Config) -> dict[str, Any]:
    return {
        "harness": _split(config.getoption("eval_harness")),
        "model": _split(config.getoption("eval_model")),
        "effort": _split(config.getoption("eval_effort")),
        "treatment": _split(config.getoption("eval_treatment")),
        "repeat": config.getoption("eval_repeat"),
    }


def _split(values: list[str] | None) -> list[str]:
    return [part for value in values or () for part in value.split(",") if part]
