"""Each real agent CLI, run headless against the scripted model server, offline.

Every test runs the pinned CLI (installed by scripts/install_clis.sh; installed here on first
use) in a fresh git workspace with a private HOME, and a script that (1) creates a file, (2)
edits one, (3) runs a shell command and (4) answers. It then checks the workspace, the turns the
server played, and that the usage in the CLI's own output and session log equals what the
server sent. The command lines and environments below are the ones the adapters should use.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.testing import clis
from harnessdrive.testing.model_server import (
    EditFile,
    ModelServer,
    Script,
    Shell,
    Turn,
    Usage,
    WriteFile,
)

pytestmark = pytest.mark.cli

MODEL = "mock-model"

CREATE = Turn(
    text="Creating hello.txt.",
    actions=(WriteFile(path="hello.txt", content="hello world\n"),),
    usage=Usage(input=100, cache_read=30, cache_write=20, output=50, reasoning=7),
)
EDIT = Turn(
    text="Editing app.py.",
    actions=(EditFile(path="app.py", old="x = 1", new="x = 2"),),
    usage=Usage(input=110, cache_read=40, output=60),
)
RUN = Turn(
    text="Running a command.",
    actions=(Shell(command="cat hello.txt app.py > combined.txt"),),
    usage=Usage(input=120, cache_read=50, cache_write=10, output=70, reasoning=3),
)
ANSWER = Turn(text="All done.", usage=Usage(input=130, cache_read=60, output=80))
SCRIPT = Script(turns=(CREATE, EDIT, RUN, ANSWER))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "config", "user.name", "t"], cwd=root, check=True)
    subprocess.run(["git", "config", "user.email", "t@example.com"], cwd=root, check=True)
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=root, check=True)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(SCRIPT) as running:
        yield running


def binary(name: str) -> Path:
    # The test command installs what the tests need; a stamped version is a no-op.
    if not clis.is_installed(name):
        clis.install([name])
    return clis.binary(name)


def run(
    argv: Sequence[str | Path], env: Mapping[str, str], cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    base = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "TERM": "dumb"}
    completed = subprocess.run(
        [str(part) for part in argv],
        env={**base, **env},
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    # Shown by pytest when an assertion below fails.
    print(f"$ {' '.join(map(str, argv))}\nrc={completed.returncode}")
    print("--- stdout\n" + completed.stdout[-6000:] + "\n--- stderr\n" + completed.stderr[-3000:])
    return completed


def assert_workspace_done(workspace: Path, shell_ran: bool = True) -> None:
    assert (workspace / "hello.txt").read_text() == "hello world\n"
    assert (workspace / "app.py").read_text() == "x = 2\n"
    if shell_ran:
        assert (workspace / "combined.txt").read_text() == "hello world\nx = 2\n"


def assert_played(server: ModelServer, turns: list[int]) -> None:
    assert [r.turn for r in server.turns()] == turns
    problems = [r for r in server.requests if r.kind in ("error", "overrun")]
    assert problems == [], [(r.kind, r.error, r.error_detail) for r in problems]


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def only(paths: Iterator[Path]) -> Path:
    found = list(paths)
    assert len(found) == 1, found
    return found[0]


# Claude Code ------------------------------------------------------------------------------


def test_claude_code(server: ModelServer, workspace: Path, home: Path) -> None:
    session = str(uuid.uuid4())
    config = home / ".claude"
    env = {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_BASE_URL": server.endpoints.anthropic,
        "ANTHROPIC_API_KEY": "sk-test",
        "IS_SANDBOX": "1",  # allows --dangerously-skip-permissions as root
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    argv = [
        binary("claude"), "-p", "Do the task.",
        "--output-format", "stream-json", "--verbose",
        "--dangerously-skip-permissions",
        "--model", "claude-sonnet-4-5",
        "--session-id", session,
    ]  # fmt: skip
    completed = run(argv, env, workspace)

    assert completed.returncode == 0
    assert_workspace_done(workspace)
    assert_played(server, [0, 1, 2, 3])
    sent = server.totals("anthropic")
    result = json_lines(completed.stdout)[-1]
    assert result["type"] == "result" and result["result"] == "All done."
    assert result["usage"]["input_tokens"] == sent.input
    assert result["usage"]["cache_read_input_tokens"] == sent.cache_read
    assert result["usage"]["cache_creation_input_tokens"] == sent.cache_write
    assert result["usage"]["output_tokens"] == sent.output + sent.reasoning
    assert result["usage"]["output_tokens_details"]["thinking_tokens"] == sent.reasoning
    # The transcript writes one line per content block; each API call has one message id.
    transcript = only(config.glob(f"projects/*/{session}.jsonl"))
    per_call = {
        line["message"]["id"]: line["message"]["usage"]
        for line in json_lines(transcript.read_text())
        if line.get("type") == "assistant"
    }
    assert len(per_call) == 4
    assert sum(u["input_tokens"] for u in per_call.values()) == sent.input
    assert sum(u["cache_read_input_tokens"] for u in per_call.values()) == sent.cache_read
    assert sum(u["cache_creation_input_tokens"] for u in per_call.values()) == sent.cache_write
    assert sum(u["output_tokens"] for u in per_call.values()) == sent.output + sent.reasoning


# Codex ------------------------------------------------------------------------------------


def codex_home(home: Path, server: ModelServer, model: str) -> Path:
    codex = home / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(
        f'model = "{model}"\n'
        'model_provider = "mock"\n'
        "check_for_update_on_startup = false\n"
        "[analytics]\nenabled = false\n"
        "[model_providers.mock]\n"
        'name = "mock"\n'
        f'base_url = "{server.endpoints.openai}"\n'
        'env_key = "MOCK_API_KEY"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )
    return codex


# With an unknown model Codex offers only `exec_command`; with a model it knows (gpt-5.5 in
# 0.171) it also offers the free-form `apply_patch` tool and reports file changes.
@pytest.mark.parametrize(
    ("model", "file_tool"), [(MODEL, "command_execution"), ("gpt-5.5", "file_change")]
)
def test_codex(
    server: ModelServer, workspace: Path, home: Path, model: str, file_tool: str
) -> None:
    codex = codex_home(home, server, model)
    env = {"HOME": str(home), "CODEX_HOME": str(codex), "MOCK_API_KEY": "sk-test"}
    argv = [
        binary("codex"), "exec", "--json",
        "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check",
        "-C", workspace, "Do the task.",
    ]  # fmt: skip
    completed = run(argv, env, workspace)

    assert completed.returncode == 0
    assert_workspace_done(workspace)
    assert_played(server, [0, 1, 2, 3])
    events = json_lines(completed.stdout)
    items = [e["item"]["type"] for e in events if e["type"] == "item.completed"]
    assert file_tool in items
    sent = server.totals("openai-responses")
    usage = next(e["usage"] for e in events if e["type"] == "turn.completed")
    assert usage == {
        "input_tokens": sent.input + sent.cache_read + sent.cache_write,
        "cached_input_tokens": sent.cache_read,
        "cache_write_input_tokens": sent.cache_write,
        "output_tokens": sent.output + sent.reasoning,
        "reasoning_output_tokens": sent.reasoning,
    }
    rollout = only(codex.glob("sessions/*/*/*/rollout-*.jsonl"))
    counts = [
        line["payload"]["info"]
        for line in json_lines(rollout.read_text())
        if line.get("type") == "event_msg"
        and line["payload"].get("type") == "token_count"
        and line["payload"].get("info")
    ]
    total = counts[-1]["total_token_usage"]
    assert total["input_tokens"] == usage["input_tokens"]
    assert total["cached_input_tokens"] == sent.cache_read
    assert total["output_tokens"] == usage["output_tokens"]


# Gemini CLI -------------------------------------------------------------------------------


def test_gemini_cli(server: ModelServer, workspace: Path, home: Path) -> None:
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True},
    }
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    env = {
        "HOME": str(home),
        "GEMINI_CLI_HOME": str(home),
        "GOOGLE_GEMINI_BASE_URL": server.endpoints.gemini,
        "GEMINI_API_KEY": "sk-test",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    argv = [
        binary("gemini"), "-p", "Do the task.", "-o", "stream-json",
        "--approval-mode", "yolo", "-m", "gemini-2.5-flash",
    ]  # fmt: skip
    completed = run(argv, env, workspace)

    assert completed.returncode == 0
    assert_workspace_done(workspace)
    assert_played(server, [0, 1, 2, 3])
    sent = server.totals("gemini")
    stats = json_lines(completed.stdout)[-1]["stats"]
    assert stats["input_tokens"] == sent.input + sent.cache_read  # promptTokenCount
    assert stats["cached"] == sent.cache_read
    assert stats["input"] == sent.input
    assert stats["output_tokens"] == sent.output
    session = only(home.glob(".gemini/tmp/*/chats/session-*.jsonl"))
    per_call = {
        line["id"]: line["tokens"]
        for line in json_lines(session.read_text())
        if line.get("type") == "gemini"
    }
    assert len(per_call) == 4
    assert sum(t["input"] for t in per_call.values()) == sent.input + sent.cache_read
    assert sum(t["cached"] for t in per_call.values()) == sent.cache_read
    assert sum(t["output"] for t in per_call.values()) == sent.output
    assert sum(t["thoughts"] for t in per_call.values()) == sent.reasoning


# opencode ---------------------------------------------------------------------------------


def test_opencode(server: ModelServer, workspace: Path, home: Path) -> None:
    config = {
        "$schema": "https://opencode.ai/config.json",
        "model": f"mock/{MODEL}",
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            "mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Mock",
                "options": {"baseURL": server.endpoints.openai, "apiKey": "sk-test"},
                "models": {
                    MODEL: {
                        "name": "Mock",
                        "cost": {"input": 1, "output": 2, "cache_read": 0.1, "cache_write": 1.25},
                        "limit": {"context": 100000, "output": 8000},
                    }
                },
            }
        },
    }
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"),
        "OPENCODE_CONFIG_CONTENT": json.dumps(config),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    }
    argv = [
        binary("opencode"),
        "run",
        "--format",
        "json",
        "--pure",
        "-m",
        f"mock/{MODEL}",
        "Do the task.",
    ]
    completed = run(argv, env, workspace)

    assert completed.returncode == 0
    assert_workspace_done(workspace)
    assert_played(server, [0, 1, 2, 3])
    # The first request is opencode's session title, answered without consuming a turn.
    assert server.requests[0].kind == "side"
    sent = server.totals("openai-chat")
    steps = [
        e["part"]["tokens"] for e in json_lines(completed.stdout) if e["type"] == "step_finish"
    ]
    assert len(steps) == 4
    assert sum(t["input"] for t in steps) == sent.input
    assert sum(t["output"] for t in steps) == sent.output
    assert sum(t["reasoning"] for t in steps) == sent.reasoning
    assert sum(t["cache"]["read"] for t in steps) == sent.cache_read
    assert sum(t["cache"]["write"] for t in steps) == sent.cache_write == 0


# pi ---------------------------------------------------------------------------------------


def test_pi(server: ModelServer, workspace: Path, home: Path) -> None:
    agent = home / "pi-agent"
    agent.mkdir()
    models = {
        "providers": {
            "mock": {
                "baseUrl": server.endpoints.openai,
                "api": "openai-completions",
                "apiKey": "sk-test",
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [
                    {
                        "id": MODEL,
                        "reasoning": False,
                        "contextWindow": 100000,
                        "maxTokens": 8000,
                        "cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 1.25},
                    }
                ],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models))
    env = {
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_OFFLINE": "1",
        "PI_TELEMETRY": "0",
    }
    argv = [
        binary("pi"), "-p", "--mode", "json", "--provider", "mock", "--model", MODEL,
        "--no-extensions", "--no-skills", "--no-context-files", "Do the task.",
    ]  # fmt: skip
    completed = run(argv, env, workspace)

    assert completed.returncode == 0
    assert_workspace_done(workspace)
    assert_played(server, [0, 1, 2, 3])
    sent = server.totals("openai-chat")
    ends = [
        e["message"]["usage"]
        for e in json_lines(completed.stdout)
        if e["type"] == "message_end" and e["message"]["role"] == "assistant"
    ]
    session = only(agent.glob("sessions/*/*.jsonl"))
    logged = [
        line["message"]["usage"]
        for line in json_lines(session.read_text())
        if line.get("type") == "message" and line["message"].get("role") == "assistant"
    ]
    for usages in (ends, logged):
        assert len(usages) == 4
        assert sum(u["input"] for u in usages) == sent.input
        assert sum(u["cacheRead"] for u in usages) == sent.cache_read
        assert sum(u["cacheWrite"] for u in usages) == sent.cache_write == 0
        assert sum(u["output"] for u in usages) == sent.output + sent.reasoning


# Qwen Code --------------------------------------------------------------------------------


def test_qwen_code(server: ModelServer, workspace: Path, home: Path) -> None:
    qwen_home = home / ".qwen"
    env = {
        "HOME": str(home),
        "QWEN_HOME": str(qwen_home),
        "QWEN_TELEMETRY_ENABLED": "false",
        "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
    }
    argv = [
        binary("qwen"), "Do the task.", "-o", "stream-json", "--yolo",
        "--auth-type", "openai", "--openai-base-url", server.endpoints.openai,
        "--openai-api-key", "sk-test", "-m", MODEL,
    ]  # fmt: skip
    completed = run(argv, env, workspace)

    assert completed.returncode == 0
    assert_workspace_done(workspace)
    assert_played(server, [0, 1, 2, 3])
    sent = server.totals("openai-chat")
    prompt = sent.input + sent.cache_read
    result = json_lines(completed.stdout)[-1]
    assert result["type"] == "result" and result["result"] == "All done."
    assert result["usage"]["input_tokens"] == prompt
    assert result["usage"]["cache_read_input_tokens"] == sent.cache_read
    assert result["usage"]["output_tokens"] == sent.output + sent.reasoning
    chat = only(qwen_home.glob("projects/*/chats/*.jsonl"))
    metadata = [
        line["usageMetadata"]
        for line in json_lines(chat.read_text())
        if line.get("type") == "assistant" and "usageMetadata" in line
    ]
    assert len(metadata) == 4
    assert sum(m["promptTokenCount"] for m in metadata) == prompt
    assert sum(m["cachedContentTokenCount"] for m in metadata) == sent.cache_read
    assert sum(m["candidatesTokenCount"] for m in metadata) == sent.output + sent.reasoning
    assert sum(m["thoughtsTokenCount"] for m in metadata) == sent.reasoning


# aider ------------------------------------------------------------------------------------

# aider makes one model call per --message, so its script does all the work in the first turn.
AIDER_SCRIPT = Script(
    turns=(
        Turn(
            text="Creating hello.txt, editing app.py and suggesting a command.",
            actions=(*CREATE.actions, *EDIT.actions, *RUN.actions),
            usage=CREATE.usage,
        ),
        ANSWER,
    )
)


def aider_home(home: Path) -> None:
    # A fresh price cache stops aider fetching litellm's price list from the network at start,
    # and prices the mock model so aider prints its cost line.
    caches = home / ".aider" / "caches"
    caches.mkdir(parents=True)
    prices = {
        f"openai/{MODEL}": {
            "max_input_tokens": 100000,
            "max_output_tokens": 8000,
            "input_cost_per_token": 1e-6,
            "output_cost_per_token": 2e-6,
            "litellm_provider": "openai",
            "mode": "chat",
        }
    }
    (caches / "model_prices_and_context_window.json").write_text(json.dumps(prices))


@pytest.mark.parametrize("edit_format", ["diff", "whole"])
def test_aider(workspace: Path, home: Path, edit_format: str) -> None:
    aider_home(home)
    # aider's prompt does not name the working directory, so the server is told it.
    with ModelServer(AIDER_SCRIPT, workdir=workspace) as server:
        env = {"HOME": str(home), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        argv = [
            binary("aider"), "--model", f"openai/{MODEL}",
            "--openai-api-base", server.endpoints.openai, "--openai-api-key", "sk-test",
            "--message", "Do the task.", "--yes-always", "--no-auto-commits",
            "--no-check-update", "--analytics-disable", "--no-show-model-warnings",
            "--no-show-release-notes", "--no-pretty", "--no-stream", "--no-gitignore",
            "--map-tokens", "0", "--edit-format", edit_format, "app.py",
        ]  # fmt: skip
        completed = run(argv, env, workspace)

        assert completed.returncode == 0
        # aider asks before running a suggested command and --yes-always answers that one
        # question "no" (explicit_yes_required), so the shell step is shown but never run.
        assert_workspace_done(workspace, shell_ran=False)
        assert not (workspace / "combined.txt").exists()
        assert_played(server, [0])
        sent = server.totals("openai-chat")
        # With --no-stream aider reports the server's prompt_tokens / completion_tokens.
        tokens = re.search(r"Tokens: (\d+) sent, (\d+) received\.", completed.stdout)
        assert tokens is not None
        assert int(tokens.group(1)) == sent.input + sent.cache_read
        assert int(tokens.group(2)) == sent.output + sent.reasoning
        assert "Cost: $" in completed.stdout
        if edit_format == "diff":
            assert "cat hello.txt app.py > combined.txt" in completed.stdout
        history = (workspace / ".aider.chat.history.md").read_text()
        assert "Applied edit to app.py" in history


# mini-swe-agent ---------------------------------------------------------------------------


def test_mini_swe_agent(server: ModelServer, workspace: Path, home: Path) -> None:
    config = only(
        clis.install_dir("mini").glob(
            "venv/lib/python*/site-packages/minisweagent/config/mini.yaml"
        )
    )
    trajectory = home / "run.traj.json"
    env = {
        "HOME": str(home),
        "MSWEA_CONFIGURED": "true",
        "MSWEA_COST_TRACKING": "ignore_errors",  # the mock model has no litellm price
        "MSWEA_GLOBAL_CONFIG_DIR": str(home / "mini"),
        "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1",
        "MSWEA_SILENT_STARTUP": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENAI_API_KEY": "sk-test",
    }
    argv = [
        binary("mini"), "-m", f"openai/{MODEL}", "-t", "Do the task.",
        "--yolo", "--exit-immediately",
        "-c", config, "-c", f"model.model_kwargs.api_base={server.endpoints.openai}",
        "-o", trajectory,
    ]  # fmt: skip
    completed = run(argv, env, workspace)

    assert completed.returncode == 0
    assert_workspace_done(workspace)
    assert_played(server, [0, 1, 2, 3])
    traj = json.loads(trajectory.read_text())
    # The final answer went out as mini's submit command.
    assert traj["info"]["exit_status"] == "Submitted"
    assert traj["info"]["model_stats"]["api_calls"] == 4
    sent = server.totals("openai-chat")
    usages = [m["extra"]["response"]["usage"] for m in traj["messages"] if m["role"] == "assistant"]
    assert sum(u["prompt_tokens"] for u in usages) == sent.input + sent.cache_read
    assert sum(u["prompt_tokens_details"]["cached_tokens"] for u in usages) == sent.cache_read
    assert sum(u["completion_tokens"] for u in usages) == sent.output + sent.reasoning
    assert sum(u["completion_tokens_details"]["reasoning_tokens"] for u in usages) == sent.reasoning
