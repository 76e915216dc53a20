"""What the entry point (:mod:`harnessdrive_pytest`) calls once an eval file is found: the
session's state, the file's collector, and the summary at the end."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.errors import HarnessdriveError
from harnessdrive.pytest_plugin.collection import FORECAST, PROPERTY, EvalFile, state_of
from harnessdrive.pytest_plugin.state import STATE_KEY, build_state


def eval_file(file_path: Path, parent: pytest.Collector, session: str) -> EvalFile:
    config = parent.config
    if STATE_KEY not in config.stash:
        config.stash[STATE_KEY] = build_state(config, session)
    collector: EvalFile = EvalFile.from_parent(parent, path=file_path)
    return collector


def forecast_items(items: Sequence[pytest.Item]) -> list[dict[str, Any]]:
    """The forecast of every eval cell among ``items`` (a dry run)."""
    from harnessdrive.pytest_plugin.collection import EvalItem, forecast_property

    return [
        forecast_property(item, state_of(item.config))
        for item in items
        if isinstance(item, EvalItem) and not skipped(item)
    ]


def skipped(item: pytest.Item) -> bool:
    """Whether pytest will skip ``item`` by its marks (skip, skipif, xfail(run=False)): a cell
    the user told pytest not to run is not forecast, as it is never started."""
    from _pytest.skipping import evaluate_skip_marks, evaluate_xfail_marks

    if evaluate_skip_marks(item) is not None:
        return True
    xfail = evaluate_xfail_marks(item)
    return xfail is not None and not xfail.run


def session_folder(config: pytest.Config, session: str) -> Path:
    root = Path(str(config.rootpath))
    results = Path(config.getoption("eval_results") or config.getini("harnessdrive_results"))
    return (results if results.is_absolute() else root / results) / session


@dataclass(frozen=True)
class Summary:
    lines: list[str]
    failed: bool = False
    """A gate did not hold (or could not be checked): the session fails."""


def summarize(
    config: pytest.Config, session: str, seen: Sequence[tuple[str, dict[str, Any]]]
) -> Summary:
    """The lines the terminal summary shows; the reports are written as a side effect, and the
    session's gates are checked on its report."""
    from harnessdrive.pytest_plugin.forecast_report import forecast_lines

    folder = session_folder(config, session)
    results = [props for name, props in seen if name == PROPERTY]
    forecasts = [props for name, props in seen if name == FORECAST]
    scopes = sorted({str(p.get("scope")) for p in (*results, *forecasts) if p.get("scope")})
    lines = ["", "harnessdrive evals: matrix scope = " + (", ".join(scopes) or "none")]
    state = config.stash.get(STATE_KEY, None)
    if state is not None and (models := state.model_lines()):
        lines.append("  models: " + " | ".join(models))
    if forecasts:
        lines += forecast_lines(forecasts)
        seconds = sum(float(f["seconds"]) for f in forecasts)
        lines.append(f"  forecast computed in {seconds:.3f}s for {len(forecasts)} cell(s)")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "forecast.json").write_text(json.dumps(forecasts, indent=2) + "\n")
    if results:
        from harnessdrive.pytest_plugin.session_report import write_reports

        try:
            written = write_reports(folder, session, results)
        except HarnessdriveError as exc:
            lines.append(f"  report not written: {exc}")
            return Summary(lines)
        lines.append(f"  report: {written.json_path}")
        if written.html_path is not None:
            lines.append(f"  html report: {written.html_path}")
        else:
            lines.append(f"  html report: not written ({written.missing})")
        if any(Path(str(p.get("folder", ""))).is_relative_to(folder) for p in results):
            lines.append(f"  results: {folder}/<worker> (harnessdrive report --results <folder>)")
        else:  # a replay records nothing of its own
            lines.append(f"  replayed from: {config.getoption('eval_replay')}")
        gate_lines, failed = gate_summary(config, folder, written)
        return Summary(lines + gate_lines, failed)
    return Summary(lines)


def gate_summary(config: pytest.Config, folder: Path, written: Any) -> tuple[list[str], bool]:
    """Check the gates the project declared (``pytest_harnessdrive_gates``) on the report."""
    from harnessdrive.pytest_plugin.gates import Gate, check_gates

    declared = [g for found in config.hook.pytest_harnessdrive_gates(config=config) for g in found]
    gates = [g for g in declared if isinstance(g, Gate)]
    if not gates:
        return [], False
    try:
        results = check_gates(gates, written.report, written.trials, folder.parent)
    except HarnessdriveError as exc:
        return [f"  gates not checked, the session fails: {exc}"], True
    lines = [f"  gate {'holds' if r.passed else 'FAILED'}: {r.gate}: {r.why}" for r in results]
    return lines, not all(r.passed for r in results)


def golden_owners(items: Sequence[pytest.Item]) -> None:
    """``--record-goldens`` writes each golden from one cell: a selection in which several
    cells would write the same golden is refused before anything runs."""
    from harnessdrive.pytest_plugin.collection import EvalItem

    writers: dict[Path, list[str]] = {}
    for item in items:
        if isinstance(item, EvalItem):
            writers.setdefault(item.files.golden, []).append(item.nodeid)
    for golden, nodes in writers.items():
        if len(nodes) > 1:
            shown = ", ".join(nodes[:3]) + (", ..." if len(nodes) > 3 else "")
            raise pytest.UsageError(
                f"--record-goldens: {len(nodes)} cells would write the golden {golden.name} "
                f"({shown}); select the one it is taken from (-k, --harness, --model)"
            )
