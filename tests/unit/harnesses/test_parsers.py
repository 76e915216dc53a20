"""Parsers checked on recorded output: Cursor CLI and goose (written from their documentation,
since neither installs here), aider's printed responses, the model each CLI's log says answered
a call, and the demo's solving scripts."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import harnessdrive.demo
from harnessdrive.demo.scripted import scripted_prices, solution_edits, solving_script
from harnessdrive.harnesses import aider, cursor, gemini, goose, opencode, pi, qwen
from harnessdrive.harnesses.cli.recording import SessionLogError, litellm_usage
from harnessdrive.tasks.loading import Task, load_suite
from harnessdrive.testing.model_server import EditFile, Shell, WriteFile
from harnessdrive.transcript.models import Usage
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot
from harnessdrive.workspace.solution import apply_solution

SAMPLES = Path(__file__).parent / "samples"
DEMO = load_suite(Path(harnessdrive.demo.__file__).parent / "suite")


def test_cursor_stream_sample() -> None:
    stdout = (SAMPLES / "cursor-stream.jsonl").read_text()
    transcript = cursor.parse_stream(stdout, Path("/home/dev/repo"), None)
    assert transcript.session_id == "c0ffee00-1111-2222-3333-444455556666"
    assert transcript.final_message == "Done: hello.txt exists and the tests pass."
    [call] = transcript.calls
    assert call.model == "gpt-5" and call.provider == "cursor"
    assert call.usage == Usage(input=1800, cache_read=900, cache_write=300, output=240)
    kinds = [(e.kind, e.text) for e in transcript.events if e.kind in ("file_change", "command")]
    assert kinds == [("file_change", "hello.txt"), ("command", "pytest -q")]
    command = next(e for e in transcript.events if e.kind == "command")
    assert command.data["exit_code"] == 0
    assert transcript.tool_calls == 2
    mixed = stdout.replace('"session_id":"c0ffee00', '"session_id":"deadbeef', 1)
    with pytest.raises(SessionLogError, match="several sessions"):
        cursor.parse_stream(mixed, None, None)


def test_goose_stream_sample() -> None:
    stdout = (SAMPLES / "goose-stream.jsonl").read_text()
    transcript = goose.parse_stream(stdout, Path("/home/dev/repo"), "gpt-4.1", "openai")
    [call] = transcript.calls
    assert call == call.model_copy(update={"model": "gpt-4.1", "provider": "openai"})
    assert call.usage == Usage(input=2100, output=240)
    assert [
        (e.kind, e.text) for e in transcript.events if e.kind in ("file_change", "command")
    ] == [
        ("file_change", "hello.txt"),
        ("command", "pytest -q"),
    ]
    assert transcript.final_message == "Done: the tests pass."
    assert transcript.tool_calls == 2


def test_aider_response_lines_give_exact_usage() -> None:
    line = (
        "ModelResponse(id='c1', created=1, model='mock-model', object='chat.completion', "
        "choices=[Choices(finish_reason='stop', index=0, message=Message(content='Edit.\\n"
        "usage=Usage(prompt_tokens=999)', role='assistant'))], usage=Usage(completion_tokens=57, "
        "prompt_tokens=1500, total_tokens=1557, completion_tokens_details="
        "CompletionTokensDetailsWrapper(reasoning_tokens=7, text_tokens=None), "
        "prompt_tokens_details=PromptTokensDetailsWrapper(cached_tokens=300)), service_tier=None)"
    )
    assert aider._content(line) == "Edit.\nusage=Usage(prompt_tokens=999)"
    usage = litellm_usage(aider._usage_fields(line))
    assert usage == Usage(input=1200, cache_read=300, output=57, reasoning=7)
    stdout = (
        "Running command: pytest -q\nAdded 12 lines of output to the chat.\n"
        "Running command: pytest -q\n"
    )
    assert aider._test_runs(stdout) == [("pytest -q", None), ("pytest -q", 0)]


def test_litellm_usage_with_anthropic_cache_fields() -> None:
    usage = litellm_usage(
        {
            "prompt_tokens": 1000,
            "completion_tokens": 50,
            "cache_read_input_tokens": 600,
            "cache_creation_input_tokens": 100,
        }
    )
    assert usage == Usage(input=300, cache_read=600, cache_write=100, output=50)


def test_pi_calls_are_billed_to_the_model_the_api_reported() -> None:
    # pi 0.73.1 keeps the requested model as "model" and, when the API names another one,
    # that one as "responseModel".
    answered = {"role": "assistant", "model": "mock-model", "responseModel": "other-model"}
    assert pi.reported_model(answered) == "other-model"
    assert pi.reported_model({"role": "assistant", "model": "mock-model"}) == "mock-model"


def test_qwen_calls_are_billed_to_the_model_the_api_reported() -> None:
    # Trimmed from a Qwen Code 0.24.4 chat file: each assistant record follows the telemetry
    # record of its API response, which carries the model the API named.
    def response(uuid: str, model: str) -> dict[str, object]:
        event = {"event.name": "qwen-code.api_response", "model": model}
        return {"uuid": uuid, "type": "system", "systemPayload": {"uiEvent": event}}

    def assistant(parent: str, prompt: int) -> dict[str, object]:
        metadata = {"promptTokenCount": prompt, "candidatesTokenCount": 10}
        return {
            "uuid": f"a-{parent}",
            "parentUuid": parent,
            "type": "assistant",
            "model": "mock-model",
            "usageMetadata": metadata,
        }

    lines = [
        response("r1", "other-model"),
        assistant("r1", 100),
        response("r2", "mock-model"),
        assistant("r2", 200),
        assistant("no-telemetry", 300),
    ]
    assert [(model, usage.input) for model, usage in qwen.model_calls(lines, "pinned")] == [
        ("other-model", 100),
        ("mock-model", 200),
        ("mock-model", 300),
    ]


def test_opencode_subagent_sessions_are_read_and_their_calls_billed(tmp_path: Path) -> None:
    # The tables and columns opencode 1.18.33 reads them from; a subagent's session names its
    # parent in parent_id.
    path = tmp_path / "opencode.db"
    with closing(sqlite3.connect(path)) as db:
        db.executescript(
            "create table session (id text, parent_id text, directory text, title text,"
            " time_created integer);"
            "create table message (id text, session_id text, time_created integer, data text);"
            "create table part (id text, message_id text, session_id text,"
            " time_created integer, data text);"
        )
        sessions = [("main", None), ("child", "main"), ("grandchild", "child"), ("other", None)]
        for number, (session, parent) in enumerate(sessions):
            db.execute(
                "insert into session values (?, ?, '/w', ?, ?)", (session, parent, session, number)
            )
            info = {"role": "assistant", "modelID": f"model-of-{session}", "tokens": {}}
            db.execute(
                "insert into message values (?, ?, ?, ?)",
                (f"m-{session}", session, number, json.dumps(info)),
            )
        db.commit()
    export = opencode.read_session(path, "main")
    assert [child["session"]["id"] for child in export["subagents"]] == ["child"]
    assert [info["modelID"] for info in opencode.assistant_infos(export)] == [
        "model-of-main",
        "model-of-child",
        "model-of-grandchild",
    ]


def test_gemini_subagent_chats_are_found_under_their_parent(tmp_path: Path) -> None:
    # Gemini CLI 0.61.0 writes a subagent's chat to chats/<parent session id>/<its id>.jsonl.
    chats = tmp_path / "chats"

    def chat(path: Path, kind: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"sessionId": path.stem, "kind": kind}) + "\n")
        return path

    main = chat(chats / "session-2026-11-29T10-00-main0000.jsonl", "main")
    child = chat(chats / "main-id" / "child.jsonl", "subagent")
    grandchild = chat(chats / "child" / "grandchild.jsonl", "subagent")
    chat(chats / "other-id" / "stranger.jsonl", "subagent")  # another session's subagent
    chat(chats / "main-id" / "not-a-subagent.jsonl", "main")
    assert gemini.subagent_chat_files(main, "main-id") == (child, grandchild)
    assert gemini.subagent_chat_files(main, "lonely-id") == ()


# An improvement task has no one solution: its rounds are scripted apart (test_demo_live.py).
SOLVED_TASKS = [task for task in DEMO.tasks if task.solution is not None]


@pytest.mark.parametrize("task", SOLVED_TASKS, ids=lambda t: t.id)
def test_demo_scripts_reproduce_each_reference_solution(task: Task, tmp_path: Path) -> None:
    snapshot = build_snapshot(task.repo_path, task.spec.repo.ref, tmp_path / "snap")
    reference = copy_snapshot(snapshot, tmp_path / "reference")
    apply_solution(task, reference)
    scripted = copy_snapshot(snapshot, tmp_path / "scripted")
    edits = solution_edits(task)
    assert edits
    for edit in edits:
        path = scripted / edit.path
        text = path.read_text()
        for action in edit.actions:
            assert isinstance(action, EditFile | WriteFile)
            if isinstance(action, EditFile):
                assert text.count(action.old) == 1  # the edit tools refuse anything else
                text = text.replace(action.old, action.new, 1)
            else:
                text = action.content
        path.write_text(text)
        assert text == (reference / edit.path).read_text()
    script = solving_script(task, "claude", "/usr/bin/python3")
    if task.spec.grade.visible_test_command:
        shell = script.turns[1].actions[0]
        assert isinstance(shell, Shell) and "pytest" in shell.command
    else:  # nothing visible to run (a differential task): the edits, then the answer
        assert len(script.turns) == 2 and not script.turns[1].actions
    assert len(solving_script(task, "aider", "python3").turns) == 2


def test_scripted_prices_are_zero_for_the_scripted_provider() -> None:
    records = scripted_prices(["gpt-5.5"])
    assert [(r.provider, r.model) for r in records] == [("scripted", "gpt-5.5")]
    assert records[0].rates.input == 0 and records[0].rates.output == 0
