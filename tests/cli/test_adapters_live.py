"""Each real agent CLI, through its adapter and the real trial runner, against the scripted model.

One task needs a file created (hello.txt), a file edited (app.py) and a command run (which
writes combined.txt). The scripted model does all three through the CLI's own tools. Each test
checks what a user would rely on: the trial is completed and graded ``pass``; the transcript has
one model call per request the server answered, each with exactly the usage the server sent, in
order, and the model it reported; the events show the file changes and the command with its exit
code; the CLI's own session log was found, bound to this run and copied into the trial folder;
and the usage totals in result.json equal the server's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.export.atif import trajectory
from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.stored_logs import recollect
from harnessdrive.harnesses.registry import get_harness
from harnessdrive.pytest_plugin.replay import stored_run
from harnessdrive.report.show import trial_view
from harnessdrive.report.show_text import render_trial
from harnessdrive.store.paths import TrialPaths
from harnessdrive.tasks import load_suite
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.model_server import EditFile, ModelServer, Script, Shell, Turn, WriteFile
from harnessdrive.testing.model_server import Usage as ScriptUsage
from harnessdrive.testing.suites import FAST_PYTEST, TaskFiles
from harnessdrive.transcript.models import Usage
from tests.atif_schema import atif_problems
from tests.cli.conftest import cli_binary, endpoint_for, run_trials, transcript_usage

pytestmark = pytest.mark.cli

COMMAND = "cat hello.txt app.py > combined.txt"
CREATE = Turn(
    text="Creating hello.txt.",
    actions=(WriteFile(path="hello.txt", content="hello world\n"),),
    usage=ScriptUsage(input=100, cache_read=30, cache_write=20, output=50, reasoning=7),
)
EDIT = Turn(
    text="Editing app.py.",
    actions=(EditFile(path="app.py", old="x = 1", new="x = 2"),),
    usage=ScriptUsage(input=110, cache_read=40, output=60),
)
RUN = Turn(
    text="Running a command.",
    actions=(Shell(command=COMMAND),),
    usage=ScriptUsage(input=120, cache_read=50, cache_write=10, output=70, reasoning=3),
)
ANSWER = Turn(text="All done.", usage=ScriptUsage(input=130, cache_read=60, output=80))
SCRIPT = Script(turns=(CREATE, EDIT, RUN, ANSWER))

# aider edits only files in its chat (here: all of them, files = "all") and never runs a command
# the model suggests; it runs the task's visible command itself (auto_test), which is the
# command here. It makes one call for the edits and stops when that command passes.
AIDER_SCRIPT = Script(
    turns=(
        Turn(
            text="Here is the change.", actions=(*CREATE.actions, *EDIT.actions), usage=EDIT.usage
        ),
        ANSWER,
    )
)
HIDDEN_TEST = """\
from pathlib import Path


def test_created():
    assert Path("hello.txt").read_text() == "hello world\\n"


def test_edited():
    assert Path("app.py").read_text() == "x = 2\\n"


def test_command_ran():
    assert Path("combined.txt").read_text() == "hello world\\nx = 2\\n"
"""
TASK = TaskFiles(
    "create-edit-run",
    files={"app.py": "x = 1\n"},
    hidden={"tests/test_done.py": HIDDEN_TEST},
    command=FAST_PYTEST,
    visible_command=COMMAND,
    prompt="Create hello.txt, set x to 2 in app.py, then combine both files into combined.txt.",
)

# The model id each CLI is run with; the server reports it back as the model that answered.
MODELS = {"claude": "claude-sonnet-4-5", "codex": "gpt-5.5", "gemini": "gemini-2.5-flash"}
OPTIONS = {"aider": {"edit_format": "diff", "auto_test": True, "files": "all"}}
# pi keeps no count of reasoning tokens (they are inside its output count).
NO_REASONING_SHARE = {"pi"}
# CLIs whose logs carry no time for their model calls: their steps have none.
UNTIMED: set[str] = set()
# The tools each CLI writes files with (mini-swe-agent has only bash).
FILE_CHANGES = {
    "claude": {"hello.txt", "app.py"},
    "codex": {"hello.txt", "app.py"},
    "gemini": {"hello.txt", "app.py"},
    "opencode": {"hello.txt", "app.py"},
    "pi": {"hello.txt", "app.py"},
    "qwen": {"hello.txt", "app.py"},
    "aider": {"hello.txt", "app.py"},
    "mini-swe-agent": set(),
}


@pytest.mark.parametrize("harness", sorted(FILE_CHANGES))
def test_real_cli_through_the_runner(harness: str, tmp_path: Path) -> None:
    model = MODELS.get(harness, "mock-model")
    script = AIDER_SCRIPT if harness == "aider" else SCRIPT
    with ModelServer(script) as server:
        variant = VariantSpec(
            harness=harness,
            name=harness,
            model=model,
            options={
                "binary": str(cli_binary(harness)),
                "endpoint": endpoint_for(server.base_url),
                **OPTIONS.get(harness, {}),
            },
        )
        summary, records = run_trials(tmp_path, [TASK], [variant])
        served = server.turns()
        problems = [r for r in server.requests if r.kind in ("error", "overrun", "side")]

    assert problems == [], [(r.kind, r.error) for r in problems]
    [record] = records
    result, transcript = record.result, record.transcript
    assert (result.status, result.outcome) == ("completed", "pass"), (result.agent, result.note)
    assert result.harness_version is not None
    assert result.agent.error is None

    # One transcript call per request the server answered, each with exactly what it sent.
    sent = [transcript_usage(r.seen_usage) for r in served if r.seen_usage is not None]
    if harness in NO_REASONING_SHARE:
        sent = [usage.model_copy(update={"reasoning": 0}) for usage in sent]
    assert [call.usage for call in transcript.calls] == sent
    assert {call.model for call in transcript.calls} == {model}
    assert {call.provider for call in transcript.calls} == {"scripted"}
    total = sum(sent, Usage())
    assert result.agent.usage == total
    assert result.agent.calls == len(served) == len(transcript.calls)
    assert result.agent.model == model

    # Events: the files it changed and the command it ran, with its exit code.
    changed = {e.text for e in transcript.events if e.kind == "file_change"}
    assert FILE_CHANGES[harness] <= changed
    assert "combined.txt" in result.diff.paths  # made in the agent's own workspace
    commands = [e for e in transcript.events if e.kind == "command" and COMMAND in e.text]
    assert [c.data["exit_code"] for c in commands] == [0]
    if harness != "aider":  # aider has no tools, and stops once its edits pass the tests
        assert transcript.tool_calls >= 3
        assert transcript.final_message == "All done."

    if harness == "codex":
        # Its stream names only the paths it changed; the patches come from its session log,
        # and `show` prints them.
        diffs = {e.text: e.data.get("diff") for e in transcript.events if e.kind == "file_change"}
        assert set(diffs) == {"hello.txt", "app.py"}
        assert diffs["hello.txt"] == "@@ -0,0 +1,1 @@\n+hello world\n"
        assert "-x = 1\n+x = 2" in diffs["app.py"]
        shown = render_trial(trial_view(TrialPaths(record.folder)))
        assert "  | +hello world" in shown and "  | +x = 2" in shown

    # Bound to its own session log, copied into the trial folder.
    assert transcript.session_log is not None
    assert (record.folder / transcript.session_log).is_file()
    assert (record.folder / "agent-prompt.md").read_text().startswith(TASK.prompt)
    assert summary.skipped_harnesses == {}

    # Replay: the adapter reads the stored stdout and session log again, with no CLI started,
    # and derives the same calls, turns and tool calls.
    adapter = get_harness(harness)
    assert isinstance(adapter, AgentCli)
    (task,) = load_suite(tmp_path / "suite").tasks
    again = recollect(adapter, record.folder, stored_run(result), transcript, task)
    assert again.calls == transcript.calls
    assert (again.turns, again.tool_calls) == (transcript.turns, transcript.tool_calls)
    assert again.session_log == transcript.session_log
    assert again.final_message == transcript.final_message

    # Its ATIF export is a valid trajectory; every tool result names its call, and no output
    # is given twice (a command and the shell result it repeats are one result).
    document = trajectory(result, transcript, TASK.prompt)
    assert atif_problems(document) == []
    results = [
        item
        for step in document["steps"]
        for item in step.get("observation", {}).get("results", [])
    ]
    if harness != "aider":  # aider's commands are its own, made by no tool call
        assert results and all("source_call_id" in item for item in results), results
    contents = [item["content"] for item in results if item["content"]]
    assert len(contents) == len(set(contents)), contents

    # Each answer of the model is a step of its own, with the time the CLI logged for it (in
    # order) and that call's tokens: summed over the steps, the trial's totals.
    answers = [step for step in document["steps"] if "metrics" in step]
    assert [step["metrics"]["extra"]["model_calls"] for step in answers] == [1] * len(sent)
    final = document["final_metrics"]
    assert final["extra"]["model_calls_without_step"] == 0
    for field, total in (
        ("prompt_tokens", "total_prompt_tokens"),
        ("completion_tokens", "total_completion_tokens"),
        ("cached_tokens", "total_cached_tokens"),
    ):
        assert sum(step["metrics"][field] for step in answers) == final[total] > 0
    assert [step["metrics"]["completion_tokens"] for step in answers] == [u.output for u in sent]
    # Priced per call (the scripted model's prices), the steps' costs add up to the trial's.
    stored = json.loads((record.folder / "trajectory.json").read_text())
    priced = [step["metrics"]["cost_usd"] for step in stored["steps"] if "metrics" in step]
    assert len(priced) == len(sent)
    assert sum(priced) == pytest.approx(stored["final_metrics"]["total_cost_usd"])
    stamps = [step.get("timestamp") for step in answers]
    if harness in UNTIMED:
        assert stamps == [None] * len(answers)
    else:
        assert None not in stamps and stamps == sorted(stamps), stamps
        agent_steps = [step for step in document["steps"] if step["source"] == "agent"]
        timed = [step["timestamp"] for step in agent_steps if "timestamp" in step]
        assert timed == sorted(timed)
