"""``--replay FOLDER``: each collected cell is matched to its stored trial in FOLDER and
replayed (:mod:`.replay`): its transcript derived again from the CLI's stored logs, its metrics
and price recomputed with the current price records, the stored verdicts kept; the case
function is called again on the rebuilt final workspace. No agent starts and nothing is spent.
The replayed results go into this session's report like a live run's."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harnessdrive.errors import HarnessdriveError
from harnessdrive.pytest_plugin.collection import PROPERTY
from harnessdrive.pytest_plugin.output import CaseOutput
from harnessdrive.pytest_plugin.replay import final_workspace, replay
from harnessdrive.pytest_plugin.run_item import call_case, events_of
from harnessdrive.pytest_plugin.skills import coverage, dialect_for
from harnessdrive.pytest_plugin.verdicts import CellVerdict, record_case_verdict, with_case_verdict
from harnessdrive.store.results import TrialResult

if TYPE_CHECKING:
    from harnessdrive.pytest_plugin.collection import EvalItem
    from harnessdrive.pytest_plugin.state import EvalState

StoredKey = tuple[str, str, int]
"""(task id, variant label, repetition): what names a cell's trial in a results store."""


@dataclass(frozen=True)
class StoredTrial:
    folder: Path
    result: TrialResult


def stored_trials(source: Path) -> dict[StoredKey, StoredTrial]:
    """Every trial under ``source`` (a session, a results folder or one trial folder), the
    latest of each cell."""
    found: dict[StoredKey, StoredTrial] = {}
    for path in _result_files(source):
        try:
            result = TrialResult.model_validate_json(path.read_text())
        except (OSError, ValueError):
            continue  # not a trial's result (or a damaged one): nothing to replay
        key = (result.task, result.variant_label, result.repetition)
        if key not in found or found[key].result.started < result.started:
            found[key] = StoredTrial(path.parent, result)
    return found


def _result_files(source: Path) -> Iterator[Path]:
    if (source / "result.json").is_file():
        yield source / "result.json"
        return
    for trials in sorted(source.glob("**/trials")):
        yield from sorted(trials.rglob("result.json"))


def replay_item(item: EvalItem, state: EvalState) -> None:
    assert state.replay_from is not None
    if state.stored is None:
        state.stored = stored_trials(state.replay_from)
    cell, files = item.cell, item.files
    key = (files.task_id, cell.variant.label, cell.repetition)
    trial = state.stored.get(key)
    if trial is None and not item.parameters and files.legacy_task_id != files.task_id:
        trial = state.stored.get((files.legacy_task_id, cell.variant.label, cell.repetition))
        if trial is not None:
            warnings.warn(
                StoreMigrationNote(
                    f"{files.legacy_task_id} was recorded before case ids carried the eval "
                    f"file's path; it is read as {files.task_id} (cases of two skills with the "
                    "same eval names shared that old id, so check it is this case's trial); a "
                    "new run records under the new id",
                ),
                stacklevel=1,
            )
    if trial is None:
        pytest.skip(f"replay: no stored trial of {cell.id} in {state.replay_from}")
    try:
        replayed = replay(trial.folder, price_files=state.settings.price_files, regrade=False)
    except HarnessdriveError as exc:
        pytest.fail(f"replay of {trial.folder}: {exc}", pytrace=False)
    result = replayed.result()
    skill = None
    if files.skill is not None:
        harness = cell.variant.harness
        installed = f"{dialect_for(harness).folder}/{files.skill.name}"
        found = events_of(replayed.transcript.model_dump(mode="json"))
        skill = coverage(files.skill, harness, installed, found)
    with final_workspace(trial.folder, replayed.task) as (_snapshot, workspace):
        output = CaseOutput(
            cell=cell,
            result=result,
            folder=trial.folder,
            workspace=workspace,
            skill=skill,
            golden=files.golden,
            facts={"record_goldens": False, "replay": True},
            derived=replayed.transcript,
        )
        verdict, note, error = call_case(item, output)
    final, judged = regraded(trial, result, verdict, note)
    props = {**output.properties(), "result": json.loads(final.to_json())}
    props["scope"] = state.scopes.get(files.name, "")
    props["case_verdict"] = verdict
    props["replay"] = {
        "source": replayed.source,
        "stored_case_verdict": stored_case_verdict(trial.result),
        "stored_cost_usd": trial.result.cost.usd,
    }
    item.user_properties.append((PROPERTY, props))
    if error is not None:
        raise error
    if judged.why is not None:
        raise AssertionError(judged.why)


def regraded(
    trial: StoredTrial, replayed: TrialResult, case: str, note: str | None
) -> tuple[TrialResult, CellVerdict]:
    """The replayed cell with the case function's verdict of now. When that verdict differs
    from the stored one, the stored trial's record is updated (a re-grade is the record's new
    truth), so ``harnessdrive report`` on the stored session agrees with this replay."""
    final, judged = with_case_verdict(replayed, case, note)
    stored, _ = with_case_verdict(trial.result, case, note)
    results = results_folder(trial.folder)
    if stored != trial.result and results is not None:
        record_case_verdict(results, trial.result, case, note)
    return final, judged


def results_folder(trial_folder: Path) -> Path | None:
    """The results folder that holds ``trial_folder`` (``<results>/trials/...``)."""
    for parent in trial_folder.parents:
        if parent.name == "trials":
            return parent.parent
    return None


class StoreMigrationNote(UserWarning):
    """A stored trial was found under the id its case had before ids carried its path."""


def stored_case_verdict(result: TrialResult) -> str:
    """What the case function said when the cell ran (verdicts.py wrote it into the result)."""
    passed = result.metrics.get("case_passed")
    if passed == 1.0:
        return "pass"
    if result.outcome == "fail":
        return "fail"
    return "error"
