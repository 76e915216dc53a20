"""The scripted model server, driven over real HTTP on 127.0.0.1 with the stdlib client."""

from __future__ import annotations

import gzip
import http.client
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.errors import UserError
from harnessdrive.testing.model_server import (
    EditFile,
    ModelServer,
    RawToolCall,
    Script,
    Shell,
    SideReply,
    Turn,
    Usage,
    WriteFile,
    load_script,
)

USAGE_0 = Usage(input=100, cache_read=30, cache_write=20, output=50, reasoning=7)
USAGE_1 = Usage(input=110, cache_read=40, output=60)
USAGE_2 = Usage(input=120, cache_read=50, cache_write=10, output=70, reasoning=3)

SCRIPT = Script(
    turns=(
        Turn(
            text="Creating it.",
            actions=(WriteFile(path="hello.txt", content="hi\n"),),
            usage=USAGE_0,
        ),
        Turn(text="Editing.", actions=(EditFile(path="app.py", old="x = 1", new="x = 2"),)),
        Turn(text="Checking.", actions=(Shell(command="ls -l"),), usage=USAGE_1),
        Turn(text="All done.", usage=USAGE_2),
    )
)


# Plain HTTP helpers ---------------------------------------------------------------------


def request(
    server: ModelServer,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    payload = body if isinstance(body, bytes) else (json.dumps(body).encode() if body else None)
    connection.request(method, path, body=payload, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def post_json(server: ModelServer, path: str, body: Any) -> Any:
    status, _, data = request(server, "POST", path, body, {"Content-Type": "application/json"})
    assert status == 200, data
    return json.loads(data)


def sse(server: ModelServer, path: str, body: Any) -> list[tuple[str | None, Any]]:
    status, headers, data = request(server, "POST", path, body)
    assert status == 200, data
    assert headers["content-type"] == "text/event-stream"
    assert headers["transfer-encoding"] == "chunked"
    events: list[tuple[str | None, Any]] = []
    for block in data.decode().split("\n\n"):
        if not block.strip():
            continue
        name = None
        payload = ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                payload = line[len("data: ") :]
        events.append((name, payload if payload == "[DONE]" else json.loads(payload)))
    return events


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("x = 1\n")
    return tmp_path


@pytest.fixture
def server(workdir: Path) -> Iterator[ModelServer]:
    with ModelServer(SCRIPT, workdir=workdir) as running:
        yield running


# Tool vocabularies, as the real CLIs send them ---------------------------------------------


def schema(*required: str, **properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(required),
    }


CLAUDE_TOOLS = [
    {
        "name": "Write",
        "input_schema": schema("file_path", "content", file_path="string", content="string"),
    },
    {"name": "Read", "input_schema": schema("file_path", file_path="string")},
    {
        "name": "Edit",
        "input_schema": schema(
            "file_path",
            "old_string",
            "new_string",
            file_path="string",
            old_string="string",
            new_string="string",
        ),
    },
    {"name": "Bash", "input_schema": schema("command", command="string", timeout="number")},
]


def chat_tools(*specs: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "parameters": p}} for n, p in specs]


OPENCODE_TOOLS = chat_tools(
    ("write", schema("filePath", "content", filePath="string", content="string")),
    (
        "edit",
        schema(
            "filePath",
            "oldString",
            "newString",
            filePath="string",
            oldString="string",
            newString="string",
        ),
    ),
    ("read", schema("filePath", filePath="string")),
    ("bash", schema("command", "description", command="string", description="string")),
)

PI_EDIT = {
    "type": "object",
    "required": ["path", "edits"],
    "properties": {
        "path": {"type": "string"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["oldText", "newText"],
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
            },
        },
    },
}


def anthropic_body(messages: list[Any], stream: bool = True, tools: Any = None) -> dict[str, Any]:
    return {
        "model": "claude-test",
        "max_tokens": 100,
        "stream": stream,
        "system": [{"type": "text", "text": "You are a test."}],
        "tools": CLAUDE_TOOLS if tools is None else tools,
        "messages": messages,
    }


# Anthropic ------------------------------------------------------------------------------


def test_anthropic_stream_has_named_events_tool_use_and_usage(
    server: ModelServer, workdir: Path
) -> None:
    events = sse(
        server,
        "/v1/messages?beta=true",
        anthropic_body([{"role": "user", "content": "go"}]),
    )
    names = [name for name, _ in events]
    assert names == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(data["type"] == name for name, data in events)
    start = events[0][1]["message"]["usage"]
    assert start["input_tokens"] == 100
    assert start["cache_read_input_tokens"] == 30
    assert start["cache_creation_input_tokens"] == 20
    assert events[2][1]["delta"] == {"type": "text_delta", "text": "Creating it."}
    tool = events[4][1]["content_block"]
    assert (tool["type"], tool["name"], tool["id"]) == ("tool_use", "Write", "toolu_hd0_0")
    arguments = json.loads(events[5][1]["delta"]["partial_json"])
    assert arguments == {"file_path": str(workdir / "hello.txt"), "content": "hi\n"}
    delta = events[7][1]
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert delta["usage"]["output_tokens"] == 57  # output + reasoning
    assert delta["usage"]["output_tokens_details"] == {"thinking_tokens": 7}
    assert delta["usage"]["input_tokens"] == 100


def test_anthropic_next_turn_follows_tool_ids_and_reads_before_edit(
    server: ModelServer, workdir: Path
) -> None:
    history = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Creating it."},
                {"type": "tool_use", "id": "toolu_hd0_0", "name": "Write", "input": {}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_hd0_0"}]},
    ]
    message = post_json(server, "/v1/messages", anthropic_body(history, stream=False))
    assert message["stop_reason"] == "tool_use"
    calls = [block for block in message["content"] if block["type"] == "tool_use"]
    assert [(c["name"], c["id"]) for c in calls] == [
        ("Read", "toolu_hd1_0"),
        ("Edit", "toolu_hd1_1"),
    ]
    assert calls[1]["input"] == {
        "file_path": str(workdir / "app.py"),
        "old_string": "x = 1",
        "new_string": "x = 2",
    }
    assert message["usage"]["input_tokens"] == 0
    assert [r.turn for r in server.turns()] == [1]


def test_same_request_twice_gets_the_same_turn(server: ModelServer) -> None:
    body = anthropic_body([{"role": "user", "content": "go"}], stream=False)
    first = post_json(server, "/v1/messages", body)
    second = post_json(server, "/v1/messages", body)
    assert first["content"][1]["name"] == second["content"][1]["name"] == "Write"
    assert [r.turn for r in server.turns()] == [0, 0]


def test_final_turn_and_overrun(server: ModelServer) -> None:
    done = [{"type": "tool_use", "id": "toolu_hd2_0", "name": "Bash", "input": {}}]
    history = [{"role": "user", "content": "go"}, {"role": "assistant", "content": done}]
    final = post_json(server, "/v1/messages", anthropic_body(history, stream=False))
    assert final["content"] == [{"type": "text", "text": "All done."}]
    assert final["stop_reason"] == "end_turn"
    history += [{"role": "user", "content": "more"}, {"role": "assistant", "content": "All done."}]
    overrun = post_json(server, "/v1/messages", anthropic_body(history, stream=False))
    assert overrun["content"] == [{"type": "text", "text": "The script has no more turns."}]
    assert [(r.kind, r.turn) for r in server.requests] == [("turn", 3), ("overrun", None)]


def test_side_requests_are_answered_without_consuming_turns(server: ModelServer) -> None:
    status, _, body = request(server, "HEAD", "/api/hello")
    assert (status, body) == (200, b"")
    counted = post_json(server, "/v1/messages/count_tokens", {"messages": [{"role": "user"}]})
    assert counted["input_tokens"] > 0
    models = post_json(
        server,
        "/v1/messages",
        anthropic_body([{"role": "user", "content": "title?"}], stream=False, tools=[]),
    )
    assert models["content"] == [{"type": "text", "text": "Scripted session"}]
    status, _, listing = request(server, "GET", "/v1/models")
    assert status == 200 and json.loads(listing)["data"][0]["id"] == "harnessdrive-mock"
    status, _, _ = request(server, "POST", "/api/event_logging/batch", {"events": []})
    assert status == 204
    kinds = [r.kind for r in server.requests]
    assert kinds == ["probe", "count_tokens", "side", "probe", "telemetry"]
    assert server.turns() == ()


# OpenAI Chat Completions ------------------------------------------------------------------


def chat_body(
    tools: Any, stream: bool = True, include_usage: bool = True, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "mock",
        "stream": stream,
        "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}],
        "tools": tools,
        **extra,
    }
    if stream and include_usage:
        body["stream_options"] = {"include_usage": True}
    return body


def test_chat_stream_renders_opencode_tools_and_ends_with_usage_chunk(
    server: ModelServer, workdir: Path
) -> None:
    events = sse(server, "/v1/chat/completions", chat_body(OPENCODE_TOOLS))
    chunks = [data for _, data in events]
    assert chunks[-1] == "[DONE]"
    usage_chunk = chunks[-2]
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"] == {
        "prompt_tokens": 150,
        "completion_tokens": 57,
        "total_tokens": 207,
        "prompt_tokens_details": {"cached_tokens": 30},
        "completion_tokens_details": {"reasoning_tokens": 7},
    }
    assert chunks[-3]["choices"][0]["finish_reason"] == "tool_calls"
    call = next(c for c in chunks[:-1] if c["choices"] and "tool_calls" in c["choices"][0]["delta"])
    function = call["choices"][0]["delta"]["tool_calls"][0]["function"]
    assert function["name"] == "write"
    assert json.loads(function["arguments"]) == {
        "filePath": str(workdir / "hello.txt"),
        "content": "hi\n",
    }
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[:-2])
    assert text == "Creating it."


def test_chat_without_include_usage_puts_usage_on_last_chunk(server: ModelServer) -> None:
    events = sse(server, "/v1/chat/completions", chat_body(OPENCODE_TOOLS, include_usage=False))
    last = events[-2][1]
    assert last["choices"][0]["finish_reason"] == "tool_calls"
    assert last["usage"]["prompt_tokens"] == 150


def test_chat_json_renders_pi_edit_array_and_fills_required_arguments(server: ModelServer) -> None:
    tools = chat_tools(
        ("edit", PI_EDIT),
        ("bash", schema("command", "description", command="string", description="string")),
    )
    body = chat_body(tools, stream=False)
    body["messages"] += [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "call_hd0_0", "type": "function"}],
        },
        {"role": "tool", "tool_call_id": "call_hd0_0", "content": "ok"},
    ]
    completion = post_json(server, "/v1/chat/completions", body)
    assert completion["object"] == "chat.completion"
    calls = completion["choices"][0]["message"]["tool_calls"]
    assert json.loads(calls[0]["function"]["arguments"])["edits"] == [
        {"oldText": "x = 1", "newText": "x = 2"}
    ]
    body["messages"] += [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": calls[0]["id"], "type": "function"}],
        },
    ]
    completion = post_json(server, "/v1/chat/completions", body)
    arguments = json.loads(
        completion["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    )
    assert arguments == {"command": "ls -l", "description": "Scripted change."}
    assert completion["usage"]["prompt_tokens"] == 150


def test_chat_title_request_is_a_side_reply(server: ModelServer) -> None:
    completion = post_json(server, "/v1/chat/completions", chat_body([], stream=False))
    assert completion["choices"][0]["message"]["content"] == "Scripted session"
    assert completion["usage"]["total_tokens"] == 0
    assert server.requests[0].kind == "side"


def test_shell_only_client_writes_and_edits_through_the_shell(
    server: ModelServer, workdir: Path
) -> None:
    import subprocess

    tools = chat_tools(("bash", schema("command", command="string")))
    body = chat_body(tools, stream=False)
    write = post_json(server, "/v1/chat/completions", body)["choices"][0]["message"]["tool_calls"][
        0
    ]
    body["messages"].append({"role": "assistant", "tool_calls": [write]})
    edit = post_json(server, "/v1/chat/completions", body)["choices"][0]["message"]["tool_calls"][0]
    for call in (write, edit):
        command = json.loads(call["function"]["arguments"])["command"]
        subprocess.run(["bash", "-c", command], cwd=workdir, check=True)
    assert (workdir / "hello.txt").read_text() == "hi\n"
    assert (workdir / "app.py").read_text() == "x = 2\n"


def test_mini_style_client_finishes_with_the_submit_command(workdir: Path) -> None:
    script = Script(turns=(Turn(text="Done."),))
    with ModelServer(script) as running:
        body = chat_body(chat_tools(("bash", schema("command", command="string"))), stream=False)
        body["messages"][1]["content"] = "finish with `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`"
        message = post_json(running, "/v1/chat/completions", body)["choices"][0]["message"]
    arguments = json.loads(message["tool_calls"][0]["function"]["arguments"])
    assert arguments == {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}


# OpenAI Responses -----------------------------------------------------------------------


def responses_body(
    tools: Any, items: list[Any] | None = None, stream: bool = True
) -> dict[str, Any]:
    return {
        "model": "mock",
        "stream": stream,
        "instructions": "sys",
        "tools": tools,
        "input": items
        or [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}],
    }


EXEC_COMMAND = {
    "type": "function",
    "name": "exec_command",
    "parameters": schema("cmd", cmd="string"),
}


def test_responses_stream_events_and_usage(server: ModelServer) -> None:
    events = sse(server, "/v1/responses", responses_body([EXEC_COMMAND]))
    names = [name for name, _ in events]
    assert names[0] == "response.created" and names[-1] == "response.completed"
    assert "response.output_text.delta" in names
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    done = [data["item"] for name, data in events if name == "response.output_item.done"]
    assert [item["type"] for item in done] == ["message", "function_call"]
    assert done[1]["name"] == "exec_command" and done[1]["call_id"] == "call_hd0_0"
    command = json.loads(done[1]["arguments"])["cmd"]
    assert "printf" in command and "hello.txt" in command
    assert events[-1][1]["response"]["usage"] == {
        "input_tokens": 150,
        "input_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 20},
        "output_tokens": 57,
        "output_tokens_details": {"reasoning_tokens": 7},
        "total_tokens": 207,
    }


def test_responses_groups_output_items_into_replies_and_uses_apply_patch(
    server: ModelServer,
) -> None:
    patch_tool = {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}}
    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Creating it."}],
        },
        {"type": "custom_tool_call", "call_id": "call_hd0_0", "name": "apply_patch", "input": ""},
        {"type": "custom_tool_call_output", "call_id": "call_hd0_0", "output": "ok"},
    ]
    response = post_json(
        server, "/v1/responses", responses_body([patch_tool, EXEC_COMMAND], items, stream=False)
    )
    call = response["output"][1]
    assert call["type"] == "custom_tool_call"
    assert call["input"] == (
        "*** Begin Patch\n*** Update File: app.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
    )
    assert server.turns()[0].turn == 1


# Gemini ---------------------------------------------------------------------------------


GEMINI_TOOLS = [
    {
        "functionDeclarations": [
            {
                "name": "write_file",
                "parametersJsonSchema": schema(
                    "file_path", "content", file_path="string", content="string"
                ),
            },
            {
                "name": "run_shell_command",
                "parametersJsonSchema": schema("command", command="string"),
            },
        ]
    }
]


def gemini_body(contents: list[Any] | None = None) -> dict[str, Any]:
    return {
        "contents": contents or [{"role": "user", "parts": [{"text": "go"}]}],
        "systemInstruction": {"parts": [{"text": "sys"}]},
        "tools": GEMINI_TOOLS,
    }


def test_gemini_stream_frames_and_usage(server: ModelServer, workdir: Path) -> None:
    events = sse(server, "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", gemini_body())
    parts = [data["candidates"][0]["content"]["parts"][0] for _, data in events]
    assert parts[0] == {"text": "Creating it."}
    assert parts[1]["functionCall"]["name"] == "write_file"
    assert parts[1]["functionCall"]["args"] == {
        "file_path": str(workdir / "hello.txt"),
        "content": "hi\n",
    }
    final = events[-1][1]
    assert final["candidates"][0]["finishReason"] == "STOP"
    assert final["usageMetadata"] == {
        "promptTokenCount": 150,
        "cachedContentTokenCount": 30,
        "candidatesTokenCount": 50,
        "thoughtsTokenCount": 7,
        "totalTokenCount": 207,
    }
    assert "usageMetadata" not in events[0][1]


def test_gemini_generate_content_count_tokens_and_json_side_request(server: ModelServer) -> None:
    contents = [
        {"role": "user", "parts": [{"text": "go"}]},
        {
            "role": "model",
            "parts": [{"functionCall": {"id": "write_file__call_hd0_0", "name": "write_file"}}],
        },
        {"role": "user", "parts": [{"functionResponse": {"name": "write_file"}}]},
    ]
    # A client that drops our ids still moves on when the turn's text is in its history.
    contents_by_text = [
        {"role": "user", "parts": [{"text": "go"}]},
        {
            "role": "model",
            "parts": [{"text": "Creating it."}, {"functionCall": {"name": "write_file"}}],
        },
    ]
    for history in (contents, contents_by_text):
        response = post_json(server, "/v1beta/models/g:generateContent", gemini_body(history))
        assert response["candidates"][0]["content"]["parts"][0] == {"text": "Editing."}
    counted = post_json(server, "/v1beta/models/g:countTokens", {"contents": contents})
    assert counted["totalTokens"] > 0
    next_speaker = {
        "contents": [{"role": "user", "parts": [{"text": "who speaks next?"}]}],
        "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": {
                "type": "object",
                "properties": {
                    "reasoning": {"type": "string"},
                    "next_speaker": {"type": "string", "enum": ["model", "user"]},
                },
            },
        },
    }
    answer = post_json(server, "/v1beta/models/g:generateContent", next_speaker)
    text = answer["candidates"][0]["content"]["parts"][0]["text"]
    assert json.loads(text) == {"reasoning": "", "next_speaker": "user"}
    status, _, listing = request(server, "GET", "/v1beta/models")
    assert status == 200
    assert json.loads(listing)["models"][0]["name"] == "models/harnessdrive-mock"
    assert [r.kind for r in server.requests] == ["turn", "turn", "count_tokens", "side", "probe"]


# Text edits for aider ---------------------------------------------------------------------


def test_aider_diff_format_gets_search_replace_blocks_and_moves_on_by_text(workdir: Path) -> None:
    script = Script(
        turns=(
            Turn(
                text="Doing it.",
                actions=(
                    WriteFile(path="hello.txt", content="hi\n"),
                    EditFile(path="app.py", old="x = 1", new="x = 2"),
                    Shell(command="ls"),
                ),
            ),
            Turn(text="Fixed."),
        )
    )
    system = "Use *SEARCH/REPLACE* blocks."
    with ModelServer(script, workdir=workdir) as running:
        body = chat_body(None, stream=False)
        del body["tools"]
        body["messages"][0]["content"] = system
        text = post_json(running, "/v1/chat/completions", body)["choices"][0]["message"]["content"]
        assert text == (
            "Doing it.\n\n"
            "hello.txt\n```\n<<<<<<< SEARCH\n=======\nhi\n>>>>>>> REPLACE\n```\n\n"
            "app.py\n```\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n\n"
            "```bash\nls\n```"
        )
        body["messages"] += [
            {"role": "assistant", "content": text},
            {"role": "user", "content": "error"},
        ]
        again = post_json(running, "/v1/chat/completions", body)["choices"][0]["message"]["content"]
        assert again == "Fixed."
        assert [r.turn for r in running.turns()] == [0, 1]


def test_aider_whole_format_lists_whole_files(workdir: Path) -> None:
    script = Script(
        turns=(Turn(actions=(EditFile(path="app.py", old="1", new="3"),)), Turn(text="ok"))
    )
    with ModelServer(script, workdir=workdir) as running:
        body = chat_body(None, stream=False)
        del body["tools"]
        body["messages"][0]["content"] = "Return a *file listing*."
        text = post_json(running, "/v1/chat/completions", body)["choices"][0]["message"]["content"]
    assert text == "app.py\n```\nx = 3\n```"


# Robustness, recording, mounts --------------------------------------------------------------


def test_a_script_the_client_cannot_follow_gets_a_clean_500(server: ModelServer) -> None:
    # Turn 0 writes a file, but this client offers no tool that can.
    tools = chat_tools(("read", schema("filePath", filePath="string")))
    status, headers, data = request(
        server, "POST", "/v1/chat/completions", chat_body(tools, stream=False)
    )
    assert status == 500
    assert headers["content-type"] == "application/json"
    assert "no tool to write files among ['read']" in json.loads(data)["error"]["message"]
    record = server.requests[-1]
    assert record.kind == "error" and record.status == 500
    assert record.error is not None and "RenderError" in record.error
    # The server goes on answering.
    assert request(server, "HEAD", "/")[0] == 200


def test_a_mount_without_script_answers_500() -> None:
    with ModelServer() as running:
        status, _, data = request(running, "POST", "/v1/messages", anthropic_body([], stream=False))
    assert status == 500 and b"no script is mounted" in data


def test_requests_are_recorded_with_headers_body_protocol_and_usage(server: ModelServer) -> None:
    body = anthropic_body([{"role": "user", "content": "go"}], stream=False)
    request(
        server,
        "POST",
        "/v1/messages?beta=true",
        body,
        {"X-Api-Key": "k", "Content-Type": "application/json"},
    )
    record = server.requests[0]
    assert (record.method, record.path, record.query) == ("POST", "/v1/messages", "beta=true")
    assert record.headers["x-api-key"] == "k"
    assert record.body == body
    assert (record.protocol, record.model, record.turn, record.kind) == (
        "anthropic",
        "claude-test",
        0,
        "turn",
    )
    assert record.usage == USAGE_0
    assert record.wire_usage is not None and record.wire_usage["cache_creation_input_tokens"] == 20
    assert record.tool_names == ("Write", "Read", "Edit", "Bash")


def test_totals_follow_what_each_protocol_can_show(server: ModelServer) -> None:
    post_json(
        server, "/v1/messages", anthropic_body([{"role": "user", "content": "go"}], stream=False)
    )
    post_json(server, "/v1/chat/completions", chat_body(OPENCODE_TOOLS, stream=False))
    post_json(server, "/v1/responses", responses_body([EXEC_COMMAND], stream=False))
    assert server.totals("anthropic") == USAGE_0
    assert server.totals("openai-responses") == USAGE_0
    # Chat Completions has no cache-write field: the client sees those tokens as input.
    assert server.totals("openai-chat") == Usage(input=120, cache_read=30, output=50, reasoning=7)
    assert server.totals() == USAGE_0 + USAGE_0 + Usage(
        input=120, cache_read=30, output=50, reasoning=7
    )


def test_side_reply_usage_counts_when_the_script_sets_it() -> None:
    script = Script(
        turns=(Turn(text="hi"),), side_reply=SideReply(text="T", usage=Usage(input=5, output=1))
    )
    with ModelServer(script) as running:
        post_json(running, "/v1/chat/completions", chat_body([], stream=False))
        assert running.totals("openai-chat") == Usage(input=5, output=1)


def test_mounts_serve_separate_scripts(server: ModelServer) -> None:
    other = Script(turns=(Turn(text="Other script."),))
    endpoints = server.mount("b", other)
    assert endpoints.openai == f"{server.base_url}/s/b/v1"
    assert endpoints.anthropic == endpoints.gemini == f"{server.base_url}/s/b"
    answer = post_json(
        server,
        "/s/b/v1/messages",
        anthropic_body([{"role": "user", "content": "go"}], stream=False),
    )
    assert answer["content"] == [{"type": "text", "text": "Other script."}]
    assert server.requests[0].mount == "b" and server.requests[0].path == "/v1/messages"
    assert server.turns("b")[0].turn == 0 and server.turns() == ()


def test_gzip_and_chunked_request_bodies_are_read(server: ModelServer) -> None:
    body = json.dumps(anthropic_body([{"role": "user", "content": "go"}], stream=False)).encode()
    status, _, _ = request(
        server, "POST", "/v1/messages", gzip.compress(body), {"Content-Encoding": "gzip"}
    )
    assert status == 200
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        head = (
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )
        half = len(body) // 2
        chunks = b"".join(
            b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:half], body[half:])
        )
        connection.sendall(head + chunks + b"0\r\n\r\n")
        reply = b""
        while data := connection.recv(65536):
            reply += data
    assert reply.startswith(b"HTTP/1.1 200")
    assert [r.turn for r in server.turns()] == [0, 0]


def test_each_sse_event_is_its_own_chunk(server: ModelServer) -> None:
    body = json.dumps(anthropic_body([{"role": "user", "content": "go"}])).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        raw = b""
        while data := connection.recv(65536):
            raw += data
    stream = raw.split(b"\r\n\r\n", 1)[1]
    frames = []
    while True:
        size_line, stream = stream.split(b"\r\n", 1)
        size = int(size_line, 16)
        if size == 0:
            break
        frames.append(stream[:size])
        stream = stream[size + 2 :]
    assert len(frames) == 9
    assert all(frame.startswith(b"event: ") and frame.endswith(b"\n\n") for frame in frames)
    assert all(frame.count(b"data: ") == 1 for frame in frames)


def test_workdir_is_found_in_the_prompt_when_not_given(workdir: Path) -> None:
    with ModelServer(SCRIPT) as running:
        body = chat_body(OPENCODE_TOOLS, stream=False)
        body["messages"][0]["content"] = f"<env>\n  Working directory: {workdir}\n</env>"
        message = post_json(running, "/v1/chat/completions", body)["choices"][0]["message"]
    arguments = json.loads(message["tool_calls"][0]["function"]["arguments"])
    assert arguments["filePath"] == str(workdir / "hello.txt")


def test_raw_tool_call_is_sent_verbatim() -> None:
    script = Script(
        turns=(
            Turn(actions=(RawToolCall(name="TodoWrite", arguments={"todos": []}),)),
            Turn(text="ok"),
        )
    )
    with ModelServer(script) as running:
        message = post_json(
            running,
            "/v1/messages",
            anthropic_body([{"role": "user", "content": "go"}], stream=False),
        )
    assert message["content"] == [
        {"type": "tool_use", "id": "toolu_hd0_0", "name": "TodoWrite", "input": {"todos": []}}
    ]


# Script files -----------------------------------------------------------------------------


TOML_SCRIPT = """
side_reply = { text = "A title" }

[[turns]]
text = "Creating it."
usage = { input = 100, cache_read = 30, cache_write = 20, output = 50, reasoning = 7 }
actions = [
  { kind = "write_file", path = "hello.txt", content = "hi\\n" },
  { kind = "edit_file", path = "app.py", old = "x = 1", new = "x = 2" },
  { kind = "shell", command = "ls -l" },
  { kind = "raw", name = "TodoWrite", arguments = { todos = [] } },
]

[[turns]]
text = "All done."
"""


def test_toml_and_json_scripts_load_into_the_same_script(tmp_path: Path) -> None:
    expected = Script(
        turns=(
            Turn(
                text="Creating it.",
                usage=USAGE_0,
                actions=(
                    WriteFile(path="hello.txt", content="hi\n"),
                    EditFile(path="app.py", old="x = 1", new="x = 2"),
                    Shell(command="ls -l"),
                    RawToolCall(name="TodoWrite", arguments={"todos": []}),
                ),
            ),
            Turn(text="All done."),
        ),
        side_reply=SideReply(text="A title"),
    )
    toml_file = tmp_path / "script.toml"
    toml_file.write_text(TOML_SCRIPT)
    json_file = tmp_path / "script.json"
    json_file.write_text(expected.model_dump_json())
    assert load_script(toml_file) == expected
    assert load_script(json_file) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[[turns]]\ntext = 'x'\nactions = [{ kind = 'shell', command = 'ls' }]\n",
            "last turn must be a plain answer",
        ),
        ("[[turns]]\ntext = 'x'\nactions = [{ kind = 'teleport' }]\n", "turns.0.actions.0"),
        ("[[turns]]\ntext = 'x'\nbogus = 1\n", "turns.0.bogus: Extra inputs are not permitted"),
        ("turns = []\n", "turns: Tuple should have at least 1 item"),
        ("[[turns]\n", "is not valid TOML"),
    ],
)
def test_bad_script_files_are_user_errors(tmp_path: Path, text: str, message: str) -> None:
    file = tmp_path / "bad.toml"
    file.write_text(text)
    with pytest.raises(UserError, match=message):
        load_script(file)


def test_script_file_with_unknown_suffix_or_missing_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("turns: []")
    with pytest.raises(UserError, match=r"must end in \.toml or \.json"):
        load_script(tmp_path / "s.yaml")
    with pytest.raises(UserError, match="cannot read script"):
        load_script(tmp_path / "absent.toml")


def test_small_model_requests_are_side_requests_even_with_tools() -> None:
    with ModelServer(SCRIPT, side_models=("haiku",)) as running:
        body = anthropic_body([{"role": "user", "content": "go"}], stream=False)
        side = post_json(running, "/v1/messages", {**body, "model": "claude-haiku-4-5"})
        main = post_json(running, "/v1/messages", body)
    assert side["content"] == [{"type": "text", "text": "Scripted session"}]
    assert main["content"][1]["name"] == "Write"
    assert [(r.kind, r.turn) for r in running.requests] == [("side", None), ("turn", 0)]


def test_a_client_that_hangs_up_mid_stream_does_not_stop_the_server(server: ModelServer) -> None:
    body = json.dumps(anthropic_body([{"role": "user", "content": "go"}])).encode()
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
            connection.sendall(
                b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            connection.recv(10)
    assert request(server, "HEAD", "/api/hello")[0] == 200
    assert [r.kind for r in server.requests][:3] == ["turn", "turn", "turn"]


def test_a_turn_can_name_the_model_that_answered(workdir: Path) -> None:
    script = Script(
        turns=(
            Turn(text="Cheap answer.", model="other-model"),
            Turn(text="Main answer."),
        ),
        side_reply=SideReply(text="Side.", model="side-model"),
    )
    with ModelServer(script, workdir=workdir) as running:
        answers = {
            "anthropic": post_json(
                running,
                "/v1/messages",
                anthropic_body([{"role": "user", "content": "go"}], stream=False),
            )["model"],
            "openai-chat": post_json(
                running, "/v1/chat/completions", chat_body(OPENCODE_TOOLS, stream=False)
            )["model"],
            "openai-responses": post_json(
                running, "/v1/responses", responses_body([EXEC_COMMAND], stream=False)
            )["model"],
            "gemini": post_json(
                running, "/v1beta/models/gemini-test:generateContent", gemini_body()
            )["modelVersion"],
        }
        streamed = sse(running, "/v1/chat/completions", chat_body(OPENCODE_TOOLS))
        side = post_json(running, "/v1/chat/completions", chat_body([], stream=False))
    assert answers == dict.fromkeys(answers, "other-model")
    assert {data["model"] for _, data in streamed if data != "[DONE]"} == {"other-model"}
    assert side["model"] == "side-model"
    # The request still records what was asked for; the reply's model is kept beside it.
    first = running.requests[0]
    assert (first.model, first.reply_model) == ("claude-test", "other-model")
    assert running.requests[-1].reply_model == "side-model"


def test_a_turn_without_a_model_answers_with_the_requested_one(server: ModelServer) -> None:
    answer = post_json(
        server, "/v1/messages", anthropic_body([{"role": "user", "content": "go"}], stream=False)
    )
    assert answer["model"] == "claude-test"
    assert server.requests[0].reply_model == "claude-test"


def test_one_hour_cache_writes_show_only_on_the_anthropic_wire() -> None:
    usage = Usage(input=100, cache_read=30, cache_write=20, cache_write_1h=8, output=50)
    script = Script(turns=(Turn(text="Done.", usage=usage),))
    with ModelServer(script) as running:
        anthropic = post_json(
            running, "/v1/messages", anthropic_body([{"role": "user", "content": "go"}], False)
        )
        post_json(running, "/v1/responses", responses_body([EXEC_COMMAND], stream=False))
        post_json(running, "/v1/chat/completions", chat_body(OPENCODE_TOOLS, stream=False))
    assert anthropic["usage"]["cache_creation_input_tokens"] == 20
    assert anthropic["usage"]["cache_creation"] == {
        "ephemeral_5m_input_tokens": 12,
        "ephemeral_1h_input_tokens": 8,
    }
    assert running.totals("anthropic") == usage
    # The Responses API reports the cache write, not its lifetime; Chat Completions neither.
    assert running.totals("openai-responses") == usage.model_copy(update={"cache_write_1h": 0})
    assert running.totals("openai-chat") == Usage(input=120, cache_read=30, output=50)


def test_one_hour_cache_writes_are_a_part_of_the_cache_writes() -> None:
    with pytest.raises(ValueError, match="cannot exceed"):
        Usage(cache_write=5, cache_write_1h=6)
