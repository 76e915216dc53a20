"""A treatment runs beside its control through the command line, with the scripted agent that
follows its AGENTS.md (harnessdrive.testing.instructed)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.cli.variants import matrix_variants
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import TaskFiles, write_suite
from harnessdrive.transcript.models import Transcript

# One worker runs the module, so its shared fixtures are built once (tests/conftest.py).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("matrix-run")]

AGENT = "harnessdrive.testing.instructed:InstructedAgent"
TASK = TaskFiles(
    "fix-add",
    files={"calc.py": "def add(a, b):\n    return a - b\n"},
    solution={"calc.py": "def add(a, b):\n    return a + b\n"},
    command="grep -q 'a + b' calc.py",  # no test runner: these trials stay fast
)


@pytest.fixture(scope="module")
def matrix_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("matrix")
    suite = write_suite(root, [TASK])
    treatment = suite / "treatments" / "solve"
    treatment.mkdir(parents=True)
    (treatment / "AGENTS.md").write_text("solve it\n")
    (treatment / "CLAUDE.md").write_text("solve it, Claude\n")
    (treatment / "NOTES.txt").write_text("shared by every harness\n")
    results = root / "results"
    args = ["run", str(suite), "--harness", AGENT, "--treatment", "solve"]
    code = run_cli([*args, "--results", str(results), "--json", "--sandbox", "none"])
    assert code == 0
    return results


def _trials(results: Path) -> dict[str, tuple[TrialResult, Path]]:
    found = {}
    for path in results.glob("trials/*/*/*/r*/result.json"):
        result = TrialResult.model_validate_json(path.read_text())
        found[result.variant_label] = (result, path.parent)
    return found


def test_the_treatment_runs_beside_its_control(matrix_run: Path) -> None:
    trials = _trials(matrix_run)
    assert set(trials) == {"InstructedAgent", "InstructedAgent+solve"}
    control, _ = trials["InstructedAgent"]
    treated, folder = trials["InstructedAgent+solve"]
    assert control.variant.treatment is None
    assert control.outcome == "fail"  # no instructions: it changed nothing
    assert treated.outcome == "pass"
    assert treated.variant.treatment is not None and treated.variant.treatment.name == "solve"
    # The treatment is part of the start, never the agent's change.
    assert treated.diff.paths == ("calc.py",)
    transcript = Transcript.model_validate_json((folder / "transcript.json").read_text())
    [listing] = [e for e in transcript.events if e.kind == "note"]
    assert {"AGENTS.md", "NOTES.txt"} <= set(listing.data["files"])
    assert "CLAUDE.md" not in listing.data["files"]  # another harness's instruction file


def test_a_treatment_without_files_for_the_harness_is_refused_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path, [TASK])
    (suite / "treatments" / "claude-only").mkdir(parents=True)
    (suite / "treatments" / "claude-only" / "CLAUDE.md").write_text("x\n")
    results = tmp_path / "results"
    args = ["run", str(suite), "--harness", AGENT, "--treatment", "claude-only"]
    assert run_cli([*args, "--results", str(results)]) == 2
    assert f"has no files for {AGENT} (its instruction file: AGENTS.md)" in capsys.readouterr().err
    assert not list(results.glob("trials/**/result.json"))


def test_a_sweep_file_gives_the_arms_and_the_repeat(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, [TASK]))
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(f'harnesses = ["{AGENT}"]\ntreatments = ["./solve"]\nrepeat = 3\n')
    variants, repeat = matrix_variants(suite, [], sweep=sweep)
    assert repeat == 3
    assert [v.label for v in variants] == ["InstructedAgent", "InstructedAgent+solve"]
    assert variants[1].treatment is not None
    assert variants[1].treatment.folder == str(tmp_path / "solve")
    # The command line's treatments win over the sweep's.
    variants, _ = matrix_variants(suite, [], sweep=sweep, treatments=["other"])
    assert [v.label for v in variants] == ["InstructedAgent", "InstructedAgent+other"]


def test_each_trial_records_its_provenance(matrix_run: Path) -> None:
    trials = _trials(matrix_run)
    control, treated = trials["InstructedAgent"][0], trials["InstructedAgent+solve"][0]
    assert control.provenance is not None and treated.provenance is not None
    assert control.provenance.instruction_files == {}
    assert list(treated.provenance.instruction_files) == ["AGENTS.md"]
    assert treated.provenance.instructions_hash is not None
    assert control.provenance.start_tree != treated.provenance.start_tree
    assert (control.provenance.sandbox, control.provenance.cli_version) == ("none", "scripted")
    assert control.provenance.harnessdrive_version == control.harnessdrive_version


def test_show_gives_the_transcript_and_diff_as_text_and_json(
    matrix_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["show", "fix-add/InstructedAgent+solve/r1", "--results", str(matrix_run)]
    assert run_cli(args) == 0
    text = capsys.readouterr().out
    assert "InstructedAgent+solve on fix-add, repetition 1: pass" in text
    assert "[message] instructions: solve it" in text
    assert "[file] calc.py" in text
    assert "+    return a + b" in text
    assert run_cli([*args, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["schema"] == "harnessdrive-show-1"
    assert "+    return a + b" in shown["diff"]["text"]
    assert [e["kind"] for e in shown["events"]] == ["note", "file_change", "message"]
    assert shown["provenance"]["instruction_files"].keys() == {"AGENTS.md"}
    assert run_cli(["show", "no-such/r9", "--results", str(matrix_run)]) == 2


def test_review_accepts_a_pass_and_the_scoreboard_shows_it(
    matrix_run: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("a\nreads well\n"))
    assert run_cli(["review", "--results", str(matrix_run)]) == 0
    assert "Reviewed 1 of 1 waiting passes." in capsys.readouterr().out
    treated = _trials(matrix_run)["InstructedAgent+solve"][1]
    review = json.loads((treated / "review.json").read_text())
    assert (review["decision"], review["note"]) == ("accepted", "reads well")
    assert run_cli(["report", "--results", str(matrix_run), "--json"]) == 0
    rows = {r["variant"]: r for r in json.loads(capsys.readouterr().out)["harnesses"]}
    assert (rows["InstructedAgent+solve"]["accepted"], rows["InstructedAgent"]["accepted"]) == (
        1,
        None,
    )
    assert run_cli(["report", "--results", str(matrix_run)]) == 0
    assert "1 of 1 reviewed" in capsys.readouterr().out
    # Only passes are reviewed; a failed trial's change is refused in one line.
    refused = ["review", "fix-add/InstructedAgent/r1", "--reject", "--results", str(matrix_run)]
    assert run_cli(refused) == 2
    assert "only passes are reviewed" in capsys.readouterr().err
    # A review belongs to the diff it judged: a changed diff is waiting again.
    (treated / "diff.patch").write_text((treated / "diff.patch").read_text() + "\n")
    assert run_cli(["review", "--results", str(matrix_run)]) == 0  # stdin is spent: it stops
    assert "Reviewed 0 of 1 waiting passes." in capsys.readouterr().out


def test_each_trial_keeps_its_trajectory_in_atif(
    matrix_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _trials(matrix_run)["InstructedAgent+solve"][1]
    recorded = json.loads((folder / "trajectory.json").read_text())
    assert recorded["schema_version"] == "ATIF-v1.4"
    assert recorded["steps"][0]["source"] == "user"
    assert recorded["steps"][-1]["message"] == "solve it"
    assert recorded["extra"]["outcome"] == "pass"
    args = ["show", "fix-add/InstructedAgent+solve/r1", "--atif", "--results", str(matrix_run)]
    assert run_cli(args) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == recorded["steps"]


def test_compare_names_what_differs_beyond_the_variants(
    matrix_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    shutil.copytree(matrix_run, results)
    args = ["compare", "InstructedAgent+solve", "InstructedAgent", "--results", str(results)]
    capsys.readouterr()
    assert run_cli([*args, "--json"]) == 0
    # The treatment explains the instruction files and the start: nothing else differs.
    assert json.loads(capsys.readouterr().out)["provenance"] == []
    # One arm's CLI at another version: not what the matrix says they differ in.
    path = _trials(results)["InstructedAgent+solve"][1] / "result.json"
    data = json.loads(path.read_text())
    data["provenance"]["cli_version"] = "9.9.9"
    path.write_text(json.dumps(data))
    assert run_cli([*args, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["provenance"]
    assert [(r["field"], r["first"], r["why"]) for r in rows] == [
        ("cli_version", ["9.9.9"], "differs between the arms")
    ]
    assert run_cli(args) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "differ in: cli_version (differs between the arms): InstructedAgent+solve 9.9.9" in out
