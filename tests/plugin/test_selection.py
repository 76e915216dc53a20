"""pytest's own selection reaches eval cells before anything runs (skip, skipif, xfail, -m, -k,
parametrize), and case ids carry where a case lives, so two skills never share trials."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.store.results import TrialResult
from tests.plugin.test_one_truth import WRITER, command, write_trio
from tests.plugin.test_pytest_plugin import session_folder

pytest_plugins = ["pytester"]

ECHO = command("echo", "cat PROMPT.md > /dev/null 2>&1; echo ran > OUT.md")


def records(root: Path) -> list[TrialResult]:
    trials = session_folder(root) / "main" / "trials"
    if not trials.is_dir():
        return []
    return [
        TrialResult.model_validate_json(p.read_text())
        for p in trials.rglob("result.json")
        if "previous" not in p.parts
    ]


def write_selection(root: Path) -> None:
    evals = root / "evals"
    (evals / "fixtures" / "start").mkdir(parents=True)
    (evals / "fixtures" / "start" / "README.md").write_text("start\n")
    models = [WRITER]
    (evals / "eval_pick.py").write_text(
        "import sys\nimport pytest\nimport harnessdrive\n\n"
        "@pytest.mark.skip(reason='not today')\n"
        f"@harnessdrive.evalcase('write', fixture='start', models={models!r})\n"
        "def eval_skipped(output):\n    pass\n\n"
        "@pytest.mark.skipif('sys.platform != \"nowhere\"', reason='only on nowhere')\n"
        f"@harnessdrive.evalcase('write', fixture='start', models={models!r})\n"
        "def eval_skipif(output):\n    pass\n\n"
        "@pytest.mark.xfail(reason='known gap', strict=True)\n"
        f"@harnessdrive.evalcase('write', fixture='start', models={models!r})\n"
        "def eval_known_gap(output):\n    assert output.exists('NOPE.md')\n\n"
        "@pytest.mark.slow\n"
        f"@harnessdrive.evalcase('write', fixture='start', models={models!r})\n"
        "def eval_slow(output):\n    pass\n\n"
        "@pytest.mark.parametrize('word', ['alpha', pytest.param('beta', marks=pytest.mark.skip),"
        " 'gamma'])\n"
        f"@harnessdrive.evalcase('write {{word}}', fixture='start', models={models!r})\n"
        "def eval_words(output, word):\n"
        "    assert output.read('OUT.md') == 'done\\n'\n"
        "    assert output.result.task.endswith('eval_words_' + word)\n"
    )
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nmarkers = ["slow: a slow case"]\n'
    )


def test_pytest_selection_is_honoured_before_any_cell_starts(pytester: pytest.Pytester) -> None:
    write_selection(pytester.path)

    run = pytester.runpytest("evals", "-v", "-m", "not slow", "-p", "no:randomly", "-rs")

    run.assert_outcomes(passed=2, skipped=3, xfailed=1, deselected=1)
    out = run.stdout.str()
    assert "eval_pick.py::eval_words[alpha-writer] PASSED" in out
    assert "eval_pick.py::eval_words[beta-writer] SKIPPED" in out
    assert "not today" in out and "only on nowhere" in out
    found = records(pytester.path)
    # Skipped and deselected cells never started: no trial of theirs is recorded.
    tasks = sorted(r.task for r in found)
    assert tasks == [
        "evals-eval_pick.eval_known_gap",
        "evals-eval_pick.eval_words_alpha",
        "evals-eval_pick.eval_words_gamma",
    ]
    # Each parameter set is its own case, with its prompt filled in.
    prompts = sorted(
        p.read_text().strip()
        for p in (session_folder(pytester.path) / "main" / "trials").rglob("prompt.md")
    )
    assert prompts == ["write", "write alpha", "write gamma"]
    by_task = {r.task: r for r in found}
    assert by_task["evals-eval_pick.eval_known_gap"].outcome == "fail"

    chosen = pytester.runpytest("evals", "-k", "gamma", "--dry-run", "-q")
    out = chosen.stdout.str()
    assert "evals/eval_pick.py::eval_words[gamma-writer]" in out
    assert "alpha" not in out


def test_a_skipped_cell_is_not_forecast(pytester: pytest.Pytester) -> None:
    write_selection(pytester.path)

    pytester.runpytest("evals", "--dry-run", "-q")

    forecasts = json.loads((session_folder(pytester.path) / "forecast.json").read_text())
    cells = sorted(f["node"].split("::")[1] for f in forecasts)
    assert cells == [
        "eval_known_gap[writer]",
        "eval_slow[writer]",
        "eval_words[alpha-writer]",
        "eval_words[gamma-writer]",
    ]


def write_skill(root: Path, skill: str) -> None:
    folder = root / "skills" / skill
    (folder / "evals" / "fixtures" / "start").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"# {skill}\nSay {skill}.\n")
    (folder / "evals" / "fixtures" / "start" / "README.md").write_text("start\n")
    script = f"echo {skill} > OUT.md"
    (folder / "evals" / "eval_same.py").write_text(
        "import harnessdrive\n\n"
        f"@harnessdrive.evalcase('say it', skill={skill!r}, fixture='start', "
        f"models=[{command('same', script)!r}])\n"
        "def eval_it(output):\n"
        f"    assert output.read('OUT.md') == {skill + chr(10)!r}\n"
    )


def test_two_skills_with_the_same_eval_names_never_share_trials(
    pytester: pytest.Pytester,
) -> None:
    for skill in ("north", "south"):
        write_skill(pytester.path, skill)
    (pytester.path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")

    run = pytester.runpytest("skills", "--import-mode=importlib", "-p", "no:randomly")

    run.assert_outcomes(passed=2)
    found = records(pytester.path)
    assert sorted((r.task, r.attempt) for r in found) == [
        ("skills-north-evals-eval_same.eval_it", 1),
        ("skills-south-evals-eval_same.eval_it", 1),
    ]
    folder = session_folder(pytester.path)

    again = pytester.runpytest_subprocess(
        "skills", "--import-mode=importlib", "--replay", str(folder)
    )

    # Each replayed cell matched its own skill's trial (the case reads its own skill's output).
    again.assert_outcomes(passed=2)


def test_an_eval_folder_s_own_files_are_not_collected_and_the_ini_takes_tables(
    pytester: pytest.Pytester,
) -> None:
    evals = pytester.path / "evals"
    for folder in ("fixtures/start", "task/hidden", "goldens/start", "treatments/terse"):
        (evals / folder).mkdir(parents=True)
    (evals / "fixtures" / "start" / "test_fixture.py").write_text("raise SystemExit('fixture')\n")
    (evals / "task" / "task.toml").write_text('id = "t"\nprompt = "p"\n[repo]\npath = "."\n')
    (evals / "task" / "hidden" / "test_hidden.py").write_text("raise SystemExit('hidden')\n")
    (evals / "eval_plain.py").write_text(
        "import harnessdrive\n\n"
        "@harnessdrive.evalcase('write', fixture='start')\n"
        "def eval_it(output):\n    pass\n"
    )
    table = '{harness = "command", name = "inline", options = {template = "true"}}'
    (pytester.path / "pyproject.toml").write_text(
        f"[tool.pytest.ini_options]\nharnessdrive_matrix = [{json.dumps(table)}]\n"
    )

    run = pytester.runpytest("evals", "--dry-run", "-q")

    out = run.stdout.str()
    assert run.ret == pytest.ExitCode.OK, out
    assert "evals/eval_plain.py::eval_it[inline]" in out
    assert "1 test collected" in out


def test_a_store_with_the_old_ids_is_replayed_with_a_migration_note(
    pytester: pytest.Pytester,
) -> None:
    write_skill(pytester.path, "north")
    (pytester.path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    pytester.runpytest("skills").assert_outcomes(passed=1)
    folder = session_folder(pytester.path)
    # What a store written before case ids carried the path holds: the bare stem and function.
    (path,) = (folder / "main" / "trials").rglob("result.json")
    data = json.loads(path.read_text())
    assert data["task"] == "skills-north-evals-eval_same.eval_it"
    data["task"] = "eval_same.eval_it"
    path.write_text(json.dumps(data))

    again = pytester.runpytest_subprocess("skills", "--replay", str(folder))

    again.assert_outcomes(passed=1)
    out = again.stdout.str()
    assert "StoreMigrationNote: eval_same.eval_it was recorded before case ids" in out
    assert "read as skills-north-evals-eval_same.eval_it" in out


def test_record_goldens_refuses_a_golden_two_cells_would_write(pytester: pytest.Pytester) -> None:
    write_trio(pytester.path)  # six cells, all with the fixture's golden

    run = pytester.runpytest("evals", "--record-goldens", "-k", "eval_one")

    assert run.ret == pytest.ExitCode.USAGE_ERROR
    assert "--record-goldens: 2 cells would write the golden start" in run.stderr.str()
    assert not (pytester.path / ".harnessdrive").exists()  # refused before any cell started
    narrowed = pytester.runpytest("evals", "--record-goldens", "-k", "eval_one and writer")
    narrowed.assert_outcomes(passed=1)


def test_generated_cases_are_cases_of_their_own(pytester: pytest.Pytester) -> None:
    evals = pytester.path / "evals"
    (evals / "fixtures" / "start").mkdir(parents=True)
    (evals / "fixtures" / "start" / "README.md").write_text("start\n")
    (evals / "eval_gen.py").write_text(
        "import harnessdrive\n"
        "from harnessdrive.pytest_plugin.generators import adversarial, generated, table\n\n"
        "@adversarial('prompt', 'write OUT.md', kinds=['typo', 'shout'])\n"
        f"@harnessdrive.evalcase('{{prompt}}', fixture='start', models={[WRITER]!r})\n"
        "def eval_brittle(output, prompt):\n    pass\n\n"
        "@table('lang', {'py': 'Python', 'rs': 'Rust'})\n"
        "@generated('size', lambda rng: rng.randrange(10), count=2, seed=3)\n"
        "@harnessdrive.evalcase('write {lang} x{size}', fixture='start', "
        f"models={[WRITER]!r})\n"
        "def eval_grid(output, lang, size):\n    pass\n"
    )
    (pytester.path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")

    run = pytester.runpytest("evals", "--dry-run", "-q")

    out = run.stdout.str()
    for node in (
        "eval_brittle[original-writer]",
        "eval_brittle[typo-writer]",
        "eval_brittle[shout-writer]",
        "eval_grid[seed3-0-py-writer]",
        "eval_grid[seed3-1-rs-writer]",
    ):
        assert f"evals/eval_gen.py::{node}" in out, out
    assert "7 tests collected" in out


def test_past_failures_are_promoted_into_cases_of_their_own(pytester: pytest.Pytester) -> None:
    evals = pytester.path / "evals"
    (evals / "fixtures" / "start").mkdir(parents=True)
    (evals / "fixtures" / "start" / "README.md").write_text("start\n")
    (evals / "eval_words.py").write_text(
        "import pytest\nimport harnessdrive\n\n"
        "@pytest.mark.parametrize('word', ['alpha', 'beta', 'gamma'])\n"
        f"@harnessdrive.evalcase('write {{word}}', fixture='start', models={[WRITER]!r})\n"
        "def eval_words(output, word):\n    assert word != 'beta', 'beta is hard'\n"
    )
    (pytester.path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    pytester.runpytest("evals").assert_outcomes(passed=2, failed=1)
    (evals / "eval_promoted.py").write_text(
        "from pathlib import Path\nimport harnessdrive\n"
        "from harnessdrive.pytest_plugin.generators import promoted\n\n"
        "RESULTS = Path(__file__).parents[1] / '.harnessdrive' / 'evals'\n\n"
        "@promoted('word', 'eval_words', RESULTS)\n"
        f"@harnessdrive.evalcase('write {{word}}', fixture='start', models={[WRITER]!r})\n"
        "def eval_again(output, word):\n    assert word == 'beta'\n"
    )

    again = pytester.runpytest("evals/eval_promoted.py", "-v")

    again.assert_outcomes(passed=1)
    assert "eval_promoted.py::eval_again[promoted-0-writer] PASSED" in again.stdout.str()
