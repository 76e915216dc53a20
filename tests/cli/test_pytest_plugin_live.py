"""The pytest plugin with two real CLIs (Claude Code, Codex) against the scripted model server
and a scripted agent: a skill and two cases × three cells, in one process and under ``-n 2``;
then, with no CLI that could start, a replay of the session from the CLIs' stored logs (the same
report rows) and a dry run whose forecasts read the spend just recorded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.demo.scripted import TURN_USAGE, model_for
from harnessdrive.harnesses.cli.binaries import binary_variable
from harnessdrive.pytest_plugin.replay import replay
from harnessdrive.pytest_plugin.skills import dialect_for
from harnessdrive.store.results import TrialResult
from harnessdrive.testing.model_server import EditFile, ModelServer, Script, Shell, Turn
from tests.cli.conftest import cli_binary
from tests.plugin.evalproject import spy, write_project

pytestmark = pytest.mark.cli
pytest_plugins = ["pytester"]

REAL = ("claude", "codex")
HELLO_ID = "skills-greet-evals-eval_greet.eval_hello"
ADD_ID = "skills-greet-evals.add"
"""Case ids carry the eval file's folder from the root (a task folder's id goes under it)."""
PRICES = "".join(
    f'[[price]]\nprovider = "scripted"\nmodel = "{model_for(h)}"\ninput = 1\noutput = 2\n\n'
    for h in REAL
)


def scripts(harness: str) -> dict[str, Script]:
    done = Turn(text="Done.", usage=TURN_USAGE)
    skill = dialect_for(harness).folder
    hello = Shell(command=f"sh {skill}/greet/scripts/hello.sh")
    fix = EditFile(path="calc.py", old="a - b", new="a + b")
    return {
        HELLO_ID: Script(turns=(Turn(actions=(hello,), usage=TURN_USAGE), done)),
        ADD_ID: Script(turns=(Turn(actions=(fix,), usage=TURN_USAGE), done)),
    }


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    with ModelServer() as served:
        for harness in REAL:
            for task, script in scripts(harness).items():
                served.mount(f"{harness}.{task}", script)
        yield served


def variant(harness: str, base: str) -> dict[str, object]:
    route = f"{base}/s/{harness}.{{task}}"
    endpoint = {
        "anthropic": route,
        "openai": f"{route}/v1",
        "provider": "scripted",
        "max_retries": 0,
    }
    return {"harness": harness, "model": model_for(harness), "options": {"endpoint": endpoint}}


def reports(root: Path) -> list[dict[str, object]]:
    folders = sorted(p for p in (root / ".harnessdrive" / "evals").iterdir() if p.name[0].isdigit())
    assert all((f / "report.html").is_file() for f in folders)
    return [json.loads((f / "report.json").read_text()) for f in folders]


def outcomes(report: dict[str, object]) -> dict[tuple[str, str], str]:
    rows = report["trials"]
    assert isinstance(rows, list)
    return {(row["task"], row["variant"]): row["outcome"] for row in rows}


def test_two_real_clis_and_a_scripted_agent(
    pytester: pytest.Pytester, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for harness in REAL:
        monkeypatch.setenv(binary_variable(harness), str(cli_binary(harness)))
    base = server.base_url
    root = write_project(
        pytester.path,
        greet_models=[variant("claude", base), variant("codex", base), spy(pytester.path)],
        task_models=[variant("claude", base), variant("codex", base), "reference"],
    )
    (root / "prices.toml").write_text(PRICES)
    args = [
        "skills/greet/evals",
        "--eval-network",
        "loopback",
        "--prices",
        "prices.toml",
        "--max-usd",
        "5",
    ]

    single = pytester.runpytest(*args, "-v")
    single.assert_outcomes(passed=6)
    out = single.stdout.str()
    assert "eval_hello[claude/claude-sonnet-4-5] PASSED  pass  $0.0" in out
    assert "eval_add[codex/gpt-5.5] PASSED  pass" in out

    parallel = pytester.runpytest_subprocess(*args, "-n", "2", "-v")
    parallel.assert_outcomes(passed=6)
    first, second = reports(root)
    expected = {
        (task, variant): "pass"
        for task in (HELLO_ID, ADD_ID)
        for variant in ("claude_claude-sonnet-4-5", "codex_gpt-5.5")
    }
    expected |= {(HELLO_ID, "spy"): "pass", (ADD_ID, "reference"): "pass"}
    assert outcomes(first) == outcomes(second) == expected
    # Under xdist each worker recorded into its own folder of the one session.
    session = sorted((root / ".harnessdrive" / "evals").glob("2*"))[-1]
    assert {p.name for p in session.iterdir() if p.is_dir()} <= {"gw0", "gw1"}

    # Replay a real CLI's stored cell: the same metrics, price and grader verdict, no CLI.
    stored = [
        (r, p.parent)
        for p in sorted(session.glob("*/trials/**/result.json"))
        if (r := TrialResult.model_validate_json(p.read_text())).harness == "claude"
        and r.task == ADD_ID
    ]
    ((result, folder),) = stored
    tripwires = root / "tripwires"
    tripwires.mkdir()
    for harness in REAL:
        # A CLI that leaves a mark when started: neither replay nor the forecast may start one.
        wire = tripwires / harness
        wire.write_text(f"#!/bin/sh\ntouch {tripwires}/STARTED-{harness}\nexit 1\n")
        wire.chmod(0o755)
        monkeypatch.setenv(binary_variable(harness), str(wire))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    again = replay(folder, price_files=(root / "prices.toml",))
    assert again.source == "session log"  # derived again from Claude's own stream-json log
    assert again.usage == result.totals.usage
    assert again.turns == result.agent.turns
    assert again.usd == result.cost.usd and again.usd is not None and again.usd > 0
    assert again.grader_outcome == again.stored_grader_outcome == "pass"

    # --replay of the whole session: every cell's report row is what the live run reported.
    replayed = pytester.runpytest_subprocess(
        "skills/greet/evals", "--replay", str(session), "--prices", "prices.toml", "-v"
    )
    replayed.assert_outcomes(passed=6)
    live_rows = {(r["task"], r["variant"]): r for r in second["trials"]}
    replay_session = sorted((root / ".harnessdrive" / "evals").glob("2*"))[-1]
    replay_report = json.loads((replay_session / "report.json").read_text())
    replay_rows = {(r["task"], r["variant"]): r for r in replay_report["trials"]}
    assert replay_rows == live_rows
    assert not (replay_session / "main").exists()  # nothing ran, nothing was recorded

    # The forecast of the task_dir case reads the spend recorded for it, as the inline case's.
    forecast = pytester.runpytest_subprocess(
        "skills/greet/evals", "--dry-run", "--prices", "prices.toml"
    )
    forecast.assert_outcomes()
    assert "6 tests collected" in forecast.stdout.str()
    forecast_session = sorted((root / ".harnessdrive" / "evals").glob("2*"))[-1]
    rows = json.loads((forecast_session / "forecast.json").read_text())
    basis = {row["node"].rsplit("::", 1)[-1]: row["basis"] for row in rows}
    assert basis["eval_add[claude/claude-sonnet-4-5]"] == "history", basis
    assert basis["eval_hello[codex/gpt-5.5]"] == "history", basis
    assert not list(tripwires.glob("STARTED-*"))
