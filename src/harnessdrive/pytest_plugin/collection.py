"""Collection: an ``eval_*.py`` file's ``eval_*`` functions, each expanded into one item per
cell. Anything wrong with a case (an unknown harness or model, an unpriced model, a bad effort
rung, a missing fixture or treatment) is a collection error, so nothing runs."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.accounting.cost_range import effort_window
from harnessdrive.errors import HarnessdriveError, UserError
from harnessdrive.pytest_plugin.case import EvalCase, case_of
from harnessdrive.pytest_plugin.layout import CaseFiles, case_files
from harnessdrive.pytest_plugin.matrix import Cell, ladder
from harnessdrive.pytest_plugin.parameters import ParameterSet, parameter_sets
from harnessdrive.pytest_plugin.state import STATE_KEY, EvalState, narrowing

PROPERTY = "harnessdrive"
FORECAST = "harnessdrive_forecast"
UNAVAILABLE = "harnessdrive_unavailable"
"""A cell that could not run, and why (the session fails on it unless told to skip)."""


def state_of(config: pytest.Config) -> EvalState:
    return config.stash[STATE_KEY]


class EvalFile(pytest.Module):
    """An eval file: its module is imported like a test module; only ``eval_*`` cases count."""

    def collect(self) -> Iterator[pytest.Item]:
        module = self.obj
        state = state_of(self.config)
        options = narrowing(self.config)
        for name, function in list(vars(module).items()):
            if not name.startswith("eval_") or not callable(function):
                continue
            case = case_of(function)
            if case is None:
                raise self.CollectError(
                    f"{self.path.name}::{name}: an eval function needs @harnessdrive.evalcase(...)"
                )
            if case.problem is not None:
                raise self.CollectError(f"{self.path.name}::{name}: {case.problem}")
            try:
                sets = parameter_sets(function)
            except HarnessdriveError as exc:
                raise self.CollectError(f"{self.path.name}::{name}: {exc}") from None
            root = Path(str(self.config.rootpath))
            for found in sets:
                yield from self._cells(name, function, case, found, state, options, root)

    def _cells(
        self,
        name: str,
        function: Callable[..., Any],
        case: EvalCase,
        found: ParameterSet,
        state: EvalState,
        options: dict[str, Any],
        root: Path,
    ) -> Iterator[pytest.Item]:
        label = f"{name}[{found.id}]" if found.id else name
        try:
            case = with_parameters(case, found)
            files = case_files(
                case, self.path, name, state.skills_dir, root=root, parameters=found.id
            )
            cells = state.cells(case, files, options)
        except HarnessdriveError as exc:
            raise self.CollectError(f"{self.path.name}::{label}: {exc}") from None
        marks = [m for m in getattr(function, "pytestmark", ()) if m.name != "parametrize"]
        for cell in cells:
            cell_id = f"{found.id}-{cell.id}" if found.id else cell.id
            item = EvalItem.from_parent(
                self,
                name=f"{name}[{cell_id}]",
                case=case,
                files=files,
                cell=cell,
                function=function,
                parameters=found.values,
            )
            # pytest's own selection (skip, skipif, xfail, -m) reads the item's marks.
            for mark in (*marks, *found.marks):
                found_mark: pytest.Mark = getattr(mark, "mark", mark)
                item.keywords[found_mark.name] = found_mark
                item.own_markers.append(found_mark)
            yield item


def with_parameters(case: EvalCase, found: ParameterSet) -> EvalCase:
    """The case of one parameter set: its prompt filled in with the set's values
    (``{name}`` in ``task=``; ``{{`` and ``}}`` stand for braces)."""
    if not found.values or case.task is None:
        return case
    try:
        return replace(case, task=case.task.format_map(found.values))
    except (KeyError, IndexError, ValueError) as exc:
        raise UserError(
            f"task= {case.task!r} cannot be filled in with the parameters "
            f"{', '.join(found.values)}: {exc!r} (write a literal brace as {{{{ or }}}})"
        ) from None


class EvalItem(pytest.Item):
    def __init__(
        self,
        *,
        case: EvalCase,
        files: CaseFiles,
        cell: Cell,
        function: Callable[..., Any],
        parameters: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.case, self.files, self.cell, self.function = case, files, cell, function
        self.parameters = dict(parameters or {})
        # skipif's string conditions are evaluated in the eval module's namespace, as pytest's.
        self.obj = function
        self.add_marker("eval")

    def runtest(self) -> None:
        from harnessdrive.pytest_plugin.run_item import run_item

        run_item(self, state_of(self.config))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        # A line is needed: pytest reports a mark's skip at the item's location.
        code = getattr(self.function, "__code__", None)
        line = code.co_firstlineno - 1 if code is not None else 0
        return self.path, line, f"{self.files.name}[{self.cell.id}]"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, AssertionError | HarnessdriveError):
            return f"{type(excinfo.value).__name__}: {excinfo.value}"
        return super().repr_failure(excinfo)


def forecast_property(item: EvalItem, state: EvalState) -> dict[str, Any]:
    started = time.perf_counter()
    variant = item.cell.variant
    pricing = state.price(variant, task=item.files.task_id)
    estimate = pricing.estimate
    rungs = ladder(variant.harness)
    if estimate is not None and variant.effort in rungs:
        estimate = effort_window(estimate, rungs.index(variant.effort or ""), len(rungs))
    low = float(estimate.low) if estimate is not None else 0.0
    high = float(estimate.high) if estimate is not None else 0.0
    basis: str = estimate.basis if estimate is not None else "no model"
    if estimate is not None and estimate.effort is not None:
        basis = f"assumption, effort {variant.effort}"
    return {
        "cell": item.cell.id,
        "node": item.nodeid,
        "low": low,
        "high": high,
        "basis": basis,
        "seconds": time.perf_counter() - started,
        "scope": state.scopes.get(item.files.name, ""),
    }


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
