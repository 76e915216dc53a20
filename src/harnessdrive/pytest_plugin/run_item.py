"""One item's run: forecast it (``--dry-run``), skip it with the fix (its CLI missing or not
signed in, the cap reached), or run it as a trial and hand its output to the case function.

The case function's verdict is written back into the trial's ``result.json``, so the results
store (and ``harnessdrive report``) says what pytest says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from harnessdrive.pytest_plugin.collection import (
    FORECAST,
    PROPERTY,
    UNAVAILABLE,
    forecast_property,
)
from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput

if TYPE_CHECKING:
    from harnessdrive.pytest_plugin.collection import EvalItem
    from harnessdrive.pytest_plugin.state import EvalState


def run_item(item: EvalItem, state: EvalState) -> None:
    if state.dry_run:
        forecast = forecast_property(item, state)
        item.user_properties.append((FORECAST, forecast))
        pytest.skip(f"dry-run: forecast ${forecast['low']:.4f}-${forecast['high']:.4f}")
    if state.replay_from is not None:
        from harnessdrive.pytest_plugin.replay_item import replay_item

        replay_item(item, state)
        return
    _run(item, state)


def _run(item: EvalItem, state: EvalState) -> None:
    # What a cell's run needs is imported here: a dry run never pays for it.
    from harnessdrive.pytest_plugin.cell_file import write_cell_file
    from harnessdrive.pytest_plugin.cell_run import SpendCapReached, discard_workspace, run_cell
    from harnessdrive.pytest_plugin.cell_task import cell_suite
    from harnessdrive.pytest_plugin.skills import coverage
    from harnessdrive.pytest_plugin.verdicts import record_case_verdict

    cell, files, case = item.cell, item.files, item.case
    harness = state.harness(cell.variant.harness)
    info = harness.info()
    if not info.installed:
        fix = info.found or info.detail or f"install {info.name}"
        unavailable(item, f"{cell.variant.harness} is not installed: {fix}")
    suite, installed = cell_suite(case, files, cell, state.build)
    try:
        run = run_cell(suite, cell, state.settings, tuple(files.secrets()), case.timeout)
    except SpendCapReached as exc:
        pytest.skip(str(exc))
    result = run.result
    try:
        write_cell_file(run.folder, suite.tasks[0], item.function.__name__, item.parameters)
        if result.status == "could_not_run":
            agent = result.agent
            unavailable(item, f"{cell.variant.harness} could not run: {agent.hint or agent.error}")
        if result.status == "skipped":
            pytest.skip(f"{cell.id} did not start: {result.note or 'the spend cap was reached'}")
        skill = None
        if files.skill is not None:
            found = events(run.folder)
            skill = coverage(files.skill, cell.variant.harness, installed, found)
        output = CaseOutput(
            cell=cell,
            result=result,
            folder=run.folder,
            workspace=run.workspace,
            skill=skill,
            golden=files.golden,
            facts={"record_goldens": state.record_goldens},
        )
        verdict, note, error = call_case(item, output)
        final, judged = record_case_verdict(state.settings.results, result, verdict, note)
        props = {**output.properties(), "result": json.loads(final.to_json())}
        props["scope"] = state.scopes.get(files.name, "")
        props["case_verdict"] = verdict
        item.user_properties.append((PROPERTY, props))
    finally:
        discard_workspace(run)
    if error is not None:
        raise error
    if judged.why is not None:
        raise AssertionError(judged.why)


def unavailable(item: EvalItem, cause: str) -> NoReturn:
    """Skip a cell that could not run (its CLI missing, no login, its endpoint unreachable),
    noting the cause: the session fails on it unless skipping was asked for."""
    item.user_properties.append((UNAVAILABLE, {"cause": cause, "cell": item.cell.id}))
    pytest.skip(cause)


def call_case(item: EvalItem, output: CaseOutput) -> tuple[str, str | None, Exception | None]:
    """Call the case function: its verdict (pass, fail or error), why, and the exception to
    hand on to pytest once the verdict is recorded."""
    try:
        item.function(output, **item.parameters)
    except AssertionError as exc:
        return "fail", str(exc).splitlines()[0] if str(exc) else "AssertionError", exc
    except CannotEvaluate as exc:
        return "error", str(exc), exc
    except Exception as exc:
        return "error", f"{type(exc).__name__}: {exc}", exc
    return "pass", None, None


def events(folder: Path) -> list[tuple[str, str]]:
    path = folder / "transcript.json"
    if not path.is_file():
        return []
    return events_of(json.loads(path.read_text()))


def events_of(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (str(e.get("kind", "")), f"{e.get('text', '')} {json.dumps(e.get('data', {}))}")
        for e in data.get("events", [])
    ]
