"""Treatments with real CLIs: one treatment with AGENTS.md and CLAUDE.md runs beside its control
for codex and claude against the scripted model server, and ``show`` of a real-CLI trial gives
its tool calls and diff.

One run of the four arms serves every check. Which request came from which arm is told by the
instructions' marker: a treated CLI sends the text of its own instruction file to the model,
its control does not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.report.scoreboard import build_report
from harnessdrive.tasks.matrix_models import TreatmentSpec
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.model_server import ModelServer, RecordedRequest
from tests.cli.conftest import TrialRecord, cli_binary, endpoint_for, run_trials
from tests.cli.test_adapters_live import COMMAND, MODELS, SCRIPT, TASK

pytestmark = pytest.mark.cli

HARNESSES = ("claude", "codex")
MARKER = {"codex": "AGENTS-MARKER-4417", "claude": "CLAUDE-MARKER-9083"}


def _carries(request: RecordedRequest, marker: str) -> bool:
    return marker in str(request.body)


@pytest.fixture(scope="module")
def live(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[str, TrialRecord], dict[str, tuple[RecordedRequest, ...]], Path]:
    root = tmp_path_factory.mktemp("matrix-live")
    treatment = root / "terse"
    treatment.mkdir()
    (treatment / "AGENTS.md").write_text(f"Keep every answer short. {MARKER['codex']}\n")
    (treatment / "CLAUDE.md").write_text(f"Keep every answer short. {MARKER['claude']}\n")
    spec = TreatmentSpec(name="terse", folder=str(treatment))
    with ModelServer() as server:
        variants = []
        for harness in HARNESSES:
            endpoints = server.mount(harness, SCRIPT)
            variants.append(
                VariantSpec(
                    harness=harness,
                    model=MODELS[harness],
                    treatment=spec,
                    options={
                        "binary": str(cli_binary(harness)),
                        "endpoint": endpoint_for(endpoints.root),
                    },
                )
            )
        _, records = run_trials(root, [TASK], variants, jobs=2)  # the plan adds each control
        requests = {h: tuple(r for r in server.turns(h)) for h in HARNESSES}
    return {r.result.variant_label: r for r in records}, requests, root / "results"


def test_the_treatment_runs_beside_its_control_for_codex_and_claude(
    live: tuple[dict[str, TrialRecord], dict[str, tuple[RecordedRequest, ...]], Path],
) -> None:
    records, requests, _ = live
    labels = {f"{h}@{MODELS[h]}" for h in HARNESSES} | {f"{h}@{MODELS[h]}+terse" for h in HARNESSES}
    assert set(records) == labels
    for label, record in records.items():
        assert (record.result.status, record.result.outcome) == ("completed", "pass"), label
    report = build_report([r.result for r in records.values()])
    assert {row.variant for row in report.harnesses} == labels
    [task_row] = report.tasks
    assert {label: cell.text for label, cell in task_row.cells.items()} == dict.fromkeys(
        labels, "pass"
    )
    for harness in HARNESSES:
        control = records[f"{harness}@{MODELS[harness]}"].result
        treated = records[f"{harness}@{MODELS[harness]}+terse"].result
        own, other = MARKER[harness], MARKER["claude" if harness == "codex" else "codex"]
        carrying = [r for r in requests[harness] if _carries(r, own)]
        # Every request of the treated run carried its own file's text, none of the control's.
        assert len(carrying) == treated.agent.calls
        assert len(requests[harness]) - len(carrying) == control.agent.calls
        assert not any(_carries(r, other) for r in requests[harness])
        # The treatment is the arm's start, never the agent's change.
        assert "AGENTS.md" not in treated.diff.paths and "CLAUDE.md" not in treated.diff.paths
        assert treated.provenance is not None and control.provenance is not None
        instruction = "AGENTS.md" if harness == "codex" else "CLAUDE.md"
        assert list(treated.provenance.instruction_files) == [instruction]
        assert control.provenance.instruction_files == {}
        assert treated.provenance.config_hash == control.provenance.config_hash
        assert treated.provenance.models_reported == (MODELS[harness],)


def test_show_of_a_real_cli_trial_gives_its_tool_calls_and_diff(
    live: tuple[dict[str, TrialRecord], dict[str, tuple[RecordedRequest, ...]], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    records, _, results = live
    for harness in HARNESSES:
        record = records[f"{harness}@{MODELS[harness]}+terse"]
        assert run_cli(["show", record.result.trial_id, "--results", str(results)]) == 0
        shown = capsys.readouterr().out
        tools = [line for line in shown.splitlines() if line.startswith("[tool] ")]
        assert len(tools) >= 3, shown
        commands = [line for line in shown.splitlines() if line.startswith("[command] $ ")]
        assert any(COMMAND in line and line.endswith("-> exit 0") for line in commands), shown
        # The grader's canaries (planted to fail) are not the agent's failing tests.
        assert "== Failing tests" not in shown
        assert "+hello world" in shown and "+x = 2" in shown
        assert "== Diff" in shown and "combined.txt" in shown
