"""``session = "resume"``: round N+1 continues round N's session where the harness can resume
one, and a harness that cannot is refused before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.store.results import TrialResult
from harnessdrive.transcript.models import Transcript
from tests.trial_results import trial_folder

pytestmark = pytest.mark.slow

RESUMING = "harnessdrive.testing.improvers:ResumingImprover"


def _suite(root: Path, variant: str) -> Path:
    """A small task (two rounds, each overlay lowering a level) and one variant."""
    suite = root / "suite"
    (suite / "project").mkdir(parents=True)
    (suite / "project" / "level.py").write_text("LEVEL = 100\n")
    task = suite / "tasks" / "lower"
    (task / "objective").mkdir(parents=True)
    (task / "objective" / "level.py").write_text(
        "import sys\nsys.path.insert(0, '.')\nfrom level import LEVEL\nprint(LEVEL)\n"
    )
    for number, level in ((1, 80), (2, 50)):
        (task / f"round{number}").mkdir()
        (task / f"round{number}" / "level.py").write_text(f"LEVEL = {level}\n")
    (task / "task.toml").write_text(
        'id = "lower"\nprompt = "Lower the level."\n[repo]\npath = "../../project"\n'
        "[grade]\ncommand = \"{python} -c 'import level'\"\n"
        '[improve]\nrounds = 2\noverlays = ["round1", "round2"]\n'
        '[improve.objective]\ncommand = "{python} .objective/level.py"\n'
        'inject = [{ source = "objective/level.py", target = ".objective/level.py" }]\n'
    )
    (suite / "suite.toml").write_text(f'name = "sessions"\n[[variants]]\n{variant}')
    return suite


def test_each_round_resumes_the_session_of_the_round_before(tmp_path: Path) -> None:
    log = tmp_path / "sessions.log"
    suite = _suite(
        tmp_path,
        f'harness = "{RESUMING}"\nname = "resuming"\noptions = {{ log = "{log}" }}\n'
        'improve = { session = "resume" }\n',
    )
    results = tmp_path / "results"
    assert run_cli(["run", str(suite), "--results", str(results)]) == 0
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert (first["round"], first["resumed"], first["found"]) == (1, None, False)
    # Round 2 was handed round 1's session and found its state where round 1 left it.
    assert (second["round"], second["resumed"], second["found"]) == (2, first["session"], True)
    folder = trial_folder(results, "sessions/lower/resuming/r1")
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
