"""Which environment variables a process may see.

Agents get an allowlist plus the auth variables their own harness needs; setup and grading get
the allowlist only, never credentials. Variables that lead back to a parent agent session are
never passed, even when a harness asks for them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

_ALLOWED_NAMES = frozenset(
    {
        "PATH",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "COLORTERM",
        "NO_COLOR",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
        "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
        # Toolchains that are found through these rather than PATH alone.
        "PYENV_ROOT",
        "PYENV_VERSION",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN",
        "GOROOT",
        "GOPATH",
        "GOFLAGS",
        "GOPROXY",
        "JAVA_HOME",
        "NVM_DIR",
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "PIP_FIND_LINKS",
        "PIP_NO_INDEX",
        "PIP_CERT",
        "UV_INDEX_URL",
        "UV_FIND_LINKS",
        "UV_NO_INDEX",
        "NPM_CONFIG_REGISTRY",
        "NPM_CONFIG_CAFILE",
    }
)
_ALLOWED_PREFIXES = ("LC_",)

# Toolchain homes that default to a folder under HOME: with a private HOME they would vanish,
# so they are pointed at the real folders when those exist.
_HOME_DEFAULTS = {"CARGO_HOME": ".cargo", "RUSTUP_HOME": ".rustup", "PYENV_ROOT": ".pyenv"}

_SESSION_NAMES = frozenset(
    {
        "CLAUDECODE",
        "CLAUDE_PID",
        "AI_AGENT",
        "CLAUDE_CONFIG_DIR",
        # The host session's agents, buses and terminals: a way back out of the sandbox.
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "SSH_ASKPASS",
        "GIT_ASKPASS",
        "GPG_AGENT_INFO",
        "DBUS_SESSION_BUS_ADDRESS",
        "XDG_RUNTIME_DIR",
        "KRB5CCNAME",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XAUTHORITY",
        "TMUX",
        "TMUX_PANE",
        "STY",
        "TERM_SESSION_ID",
    }
)
_SESSION_PATTERN = re.compile(
    r"^(CLAUDE_CODE_.*|CLAUDE_AGENT_SDK.*|CODEX_SANDBOX.*|CODEX_THREAD_ID|CODEX_CI"
    r"|CODEX_INTERNAL_.*|GEMINI_CLI.*|QWEN_CODE.*|OPENCODE.*|PI_CODING_AGENT.*|CURSOR_AGENT.*"
    r"|CURSOR_TRACE.*|AIDER_.*|MSWEA_.*|VSCODE_.*|HARNESSDRIVE_.*)$"
)


def is_session_variable(name: str) -> bool:
    """True for variables that could lead a child back to a parent agent's live session."""
    return name in _SESSION_NAMES or bool(_SESSION_PATTERN.match(name))


def clean_path(value: str) -> str:
    """PATH without empty, relative or repeated entries.

    An empty entry or ``.`` means "the current folder": a grading command would then run a
    ``python`` or ``pytest`` the agent planted in its workspace.
    """
    kept: list[str] = []
    for entry in value.split(os.pathsep):
        if entry and os.path.isabs(entry) and entry not in kept:
            kept.append(entry)
    return os.pathsep.join(kept) or os.defpath


def base_environment(
    home: Path,
    tmpdir: Path,
    *,
    source: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
    passthrough: Iterable[str] = (),
) -> dict[str, str]:
    """The allowlisted environment with a private HOME and TMPDIR.

    ``passthrough`` names further variables to copy from ``source`` (a harness's auth variables);
    session variables are never copied. ``extra`` is set outright: it comes from our own code
    (a harness's private config folder, say), not from the caller's environment.
    """
    source = os.environ if source is None else source
    wanted = set(passthrough)
    env = {
        name: value
        for name, value in source.items()
        if (name in _ALLOWED_NAMES or name.startswith(_ALLOWED_PREFIXES) or name in wanted)
        and not is_session_variable(name)
    }
    real_home = source.get("HOME")
    if real_home:
        for name, folder in _HOME_DEFAULTS.items():
            candidate = Path(real_home) / folder
            if name not in env and candidate.is_dir():
                env[name] = str(candidate)
    env["PATH"] = clean_path(env.get("PATH") or os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env["HOME"] = str(home)
    env["TMPDIR"] = str(tmpdir)
    env.update(extra or {})
    return env
