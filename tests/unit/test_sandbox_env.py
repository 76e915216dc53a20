"""The environment policy: an allowlist, the harness's own auth, never a parent session."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.sandbox.env import base_environment, clean_path, is_session_variable

HOST = {
    "PATH": "/usr/local/bin::.:bin:/usr/bin:/usr/local/bin",
    "HOME": "/home/someone",
    "LANG": "en_US.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
    "TERM": "xterm",
    "https_proxy": "http://proxy:3128",
    "SSL_CERT_FILE": "/etc/ssl/certs/ca.pem",
    "ANTHROPIC_API_KEY": "sk-secret",
    "OPENAI_API_KEY": "sk-other",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "PYTHONPATH": "/home/someone/src",
    "VIRTUAL_ENV": "/home/someone/.venv",
    "CLAUDECODE": "1",
    "CLAUDE_CODE_ENTRYPOINT": "cli",
    "CLAUDE_CODE_SSE_PORT": "4444",
    "CLAUDE_PID": "123",
    "AI_AGENT": "claude",
    "CODEX_SANDBOX": "seatbelt",
    "CODEX_SANDBOX_NETWORK_DISABLED": "1",
    "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
    "VSCODE_IPC_HOOK_CLI": "/run/vscode.sock",
    "HARNESSDRIVE_RUN_MARKER": "parent-run",
    "GIT_DIR": "/home/someone/repo/.git",
}


def test_agents_get_the_allowlist_and_a_private_home(tmp_path: Path) -> None:
    env = base_environment(tmp_path / "home", tmp_path / "tmp", source=HOST)
    assert env["HOME"] == str(tmp_path / "home")
    assert env["TMPDIR"] == str(tmp_path / "tmp")
    for name in ("LANG", "LC_ALL", "TZ", "TERM", "https_proxy", "SSL_CERT_FILE"):
        assert env[name] == HOST[name]
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "PYTHONPATH"):
        assert name not in env
    assert "VIRTUAL_ENV" not in env and "GIT_DIR" not in env


def test_a_harness_gets_only_the_auth_it_names(tmp_path: Path) -> None:
    env = base_environment(
        tmp_path, tmp_path, source=HOST, passthrough=["ANTHROPIC_API_KEY", "NOT_SET"]
    )
    assert env["ANTHROPIC_API_KEY"] == "sk-secret"
    assert "OPENAI_API_KEY" not in env and "NOT_SET" not in env


@pytest.mark.parametrize(
    "name",
    [
        "CLAUDECODE",
        "CLAUDE_CODE_ENTRYPOINT",
        "CLAUDE_CODE_SSE_PORT",
        "CLAUDE_PID",
        "AI_AGENT",
        "CODEX_SANDBOX",
        "CODEX_SANDBOX_NETWORK_DISABLED",
        "SSH_AUTH_SOCK",
        "VSCODE_IPC_HOOK_CLI",
        "HARNESSDRIVE_RUN_MARKER",
    ],
)
def test_session_variables_never_pass_even_when_asked_for(tmp_path: Path, name: str) -> None:
    assert is_session_variable(name)
    env = base_environment(tmp_path, tmp_path, source=HOST, passthrough=[name])
    assert name not in env


def test_path_loses_empty_relative_and_repeated_entries(tmp_path: Path) -> None:
    env = base_environment(tmp_path, tmp_path, source=HOST)
    assert env["PATH"] == "/usr/local/bin:/usr/bin"
    assert clean_path("::.") == "/bin:/usr/bin"


def test_our_own_settings_win(tmp_path: Path) -> None:
    env = base_environment(
        tmp_path / "h", tmp_path / "t", source=HOST, extra={"CODEX_HOME": "/x", "HOME": "/y"}
    )
    assert env["CODEX_HOME"] == "/x" and env["HOME"] == "/y"
