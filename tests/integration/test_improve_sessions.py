"""``session = "resume"``: round N+1 continues round N's session where the harness can resume
one, and a harness that cannot is refused before anything runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.demo import DEMO_SUITE
from harnessdrive.store.results import TrialResult
from harnessdrive.transcript.models import Transcript
from tests.trial_results import trial_folder

pytestmark = pytest.mark.slow

RESUMING = "harnessdrive.testing.improvers:ResumingImprover"


def _suite(root: Path, variant: str) -> Path:
    suite = root / "suite"
    shutil.copytree(DEMO_SUITE / "improve-project", suite / "improve-project")
    shutil.copytree(DEMO_SUITE / "tasks" / "fewer-comparisons", suite / "tasks" / "fewer")
    (suite / "suite.toml").write_text(f'name = "sessions"\n[[variants]]\n{variant}')
    return suite


def test_each_round_resumes_the_session_of_the_round_before(tmp_path: Path) -> None:
    log = tmp_path / "sessions.log"
    suite = _suite(
        tmp_path,
        f'harness = "{RESUMING}"\nname = "resuming"\noptions = {{ log = "{log}" }}\n'
        'improve = { rounds = 2, session = "resume" }\n',
    )
    results = tmp_path / "results"
    assert run_cli(["run", str(suite), "--results", str(results)]) == 0
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert (first["round"], first["resumed"], first["found"]) == (1, None, False)
    # Round 2 was handed round 1's session and found its state where round 1 left it.
    assert (second["round"], second["resumed"], second["found"]) == (2, first["session"], True)
    folder = trial_folder(results, "sessions/fewer-comparisons/resuming/r1")
    record = json.loads((folder / "improve.json").read_text())
    assert [entry["resumed"] for entry in record["rounds"]] == [None, first["session"]]
    result = TrialResult.model_validate_json((folder / "result.json").read_text())
    assert result.outcome == "pass"
    transcripts = [folder / "transcript.json", folder / "rounds" / "2" / "transcript.json"]
    ids = [Transcript.model_validate_json(p.read_text()).session_id for p in transcripts]
    assert ids == [first["session"]] * 2


def test_a_harness_that_cannot_resume_is_refused_before_any_trial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(tmp_path, 'harness = "reference"\nimprove = { session = "resume" }\n')
    results = tmp_path / "results"
    assert run_cli(["run", str(suite), "--results", str(results)]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "cannot resume a session" in error, error
    assert not list(results.glob("trials/**/result.json"))
