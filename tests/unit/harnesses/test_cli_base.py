"""The shared machinery of the CLI adapters: flags, executables, endpoints, variant checks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harnessdrive.errors import UserError
from harnessdrive.harnesses.base import can_resume
from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.binaries import (
    PINNED,
    Located,
    Probe,
    binary_variable,
    install_roots,
    locate,
    parse_version,
    probe,
)
from harnessdrive.harnesses.cli.cli_run import EarlierLog
from harnessdrive.harnesses.cli.endpoint import parse_endpoint, require, resolve
from harnessdrive.harnesses.cli.fatal import fatal_kind
from harnessdrive.harnesses.cli.flags import Flag, FlagTable, missing_flags
from harnessdrive.harnesses.cli.install import CACHE_ENV, PINS, STAMP_NAME
from harnessdrive.harnesses.registry import available, get_harness
from harnessdrive.tasks.models import VariantSpec

REAL_CLIS = ("claude", "codex", "gemini", "opencode", "pi", "qwen", "aider", "mini-swe-agent")


def executable(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)
    return path


def test_flag_table_checks_only_listed_flags_that_are_passed() -> None:
    table = FlagTable({"model": "--model", "turns": Flag("--max-turns", listed=False), "p": "-p"})
    argv = ["claude", "-p", "--model", "x", "--max-turns", "3", "--other"]
    assert table["model"] == "--model"
    assert table.checkable(argv) == ["-p", "--model"]
    help_text = "Usage\n  -p, --print   print\n  --model-name <m>\n"
    # "--model-name" must not count as "--model".
    assert missing_flags(help_text, ["-p", "--model"]) == ["--model"]
    assert missing_flags("│ --model -m <str> │", ["--model"]) == []


def test_locate_prefers_the_option_the_variable_the_pinned_install_then_path(
    tmp_path: Path,
) -> None:
    on_path = executable(tmp_path / "path" / "pi", "#!/bin/sh\n")
    by_variable = executable(tmp_path / "var" / "pi", "#!/bin/sh\n")
    by_option = executable(tmp_path / "opt" / "pi", "#!/bin/sh\n")
    cache = tmp_path / "cache"
    env = {"PATH": str(on_path.parent), CACHE_ENV: str(cache)}
    assert locate(("pi",), "pi", None, env).path == on_path
    pin = PINS["pi"]
    pinned = executable(cache / pin.folder_name / pin.executable, "#!/bin/sh\n")
    stamp = {"package": pin.package, "version": pin.version}
    (cache / pin.folder_name / STAMP_NAME).write_text(json.dumps(stamp))
    assert locate(("pi",), "pi", None, env) == Located(pinned, PINNED)
    env[binary_variable("pi")] = str(by_variable)
    assert locate(("pi",), "pi", None, env) == locate(("pi",), "pi", None, env)
    assert locate(("pi",), "pi", None, env).path == by_variable
    assert locate(("pi",), "pi", str(by_option), env).path == by_option
    missing = locate(("pi",), "pi", str(tmp_path / "nope"), env)
    assert missing.path is None and "option" in missing.how
    assert binary_variable("mini-swe-agent") == "HARNESSDRIVE_MINI_SWE_AGENT_BINARY"


def test_version_probe_is_cached_per_file_and_never_sees_the_real_home(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    tool = executable(
        tmp_path / "tool",
        f'#!/bin/sh\necho run >> {counter}\necho "warning: /tmp/x1.2y" >&2\n'
        'echo "tool-cli 3.14.1 (build)"\necho "home=$HOME"\n',
    )
    first = probe(tool, ["--version"])
    assert probe(tool, ["--version"]) == first
    assert counter.read_text().count("run") == 1
    assert parse_version(first) == "3.14.1"
    assert f"home={os.environ.get('HOME')}\n" not in first.stdout
    assert parse_version(Probe(0, "no digits", "")) is None


def test_install_roots_name_node_modules_the_venv_and_never_a_prefix(tmp_path: Path) -> None:
    prefix = tmp_path / "npm"
    target = executable(prefix / "node_modules" / "pkg" / "bin" / "cli.js", "#!/bin/sh\n")
    link = prefix / "node_modules" / ".bin" / "cli"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    (prefix / "results").mkdir()
    assert install_roots(link) == (prefix / "node_modules",)
    named = tmp_path / "named"
    named.symlink_to(prefix)
    named_link = named / "node_modules" / ".bin" / "cli"
    assert install_roots(named_link) == (named / "node_modules", prefix / "node_modules")

    lone = executable(tmp_path / "opt" / "bin" / "agent", "#!/bin/sh\n")
    (tmp_path / "opt" / "lib").mkdir()
    assert install_roots(lone) == (lone.parent, tmp_path / "opt" / "lib")

    venv = tmp_path / "venv"
    base = tmp_path / "python" / "bin"
    base.mkdir(parents=True)
    (venv / "pyvenv.cfg").parent.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {base}\n")
    script = executable(venv / "bin" / "mini", f"#!{venv}/bin/python\n")
    roots = install_roots(script)
    assert venv in roots and base in roots and tmp_path / "python" not in roots
    assert not any(str(root).startswith("/usr/") for root in install_roots(Path("/usr/bin/env")))


def test_endpoint_option_validates_and_fills_in_the_task(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = parse_endpoint({"openai": "http://127.0.0.1:9/s/{task}/v1/", "provider": "mine"}, "v")
    assert require(spec, "openai", "codex", "v") == "http://127.0.0.1:9/s/{task}/v1/"
    endpoint = resolve(spec, "openai", "fix-bug", environ={})
    assert endpoint.url == "http://127.0.0.1:9/s/fix-bug/v1"
    assert endpoint.provider == "mine" and endpoint.api_key
    with pytest.raises(UserError, match=r"Anthropic Messages API; give endpoint\.anthropic"):
        require(spec, "anthropic", "claude", "v")
    with pytest.raises(UserError, match=r"bad 'endpoint'.*wat"):
        parse_endpoint({"openai": "http://x/v1", "wat": 1}, "v")
    with pytest.raises(UserError, match="http"):
        parse_endpoint({"openai": "localhost:8000"}, "v")
    keyed = parse_endpoint({"openai": "http://x/v1", "api_key_env": "MY_LOCAL_KEY"}, "v")
    with pytest.raises(UserError, match="MY_LOCAL_KEY"):
        resolve(keyed, "openai", "t", environ={})
    assert resolve(keyed, "openai", "t", environ={"MY_LOCAL_KEY": "k1"}).api_key == "k1"


@pytest.mark.parametrize("name", REAL_CLIS)
def test_every_real_cli_is_registered_and_refuses_bad_settings(name: str) -> None:
    assert name in available()
    harness = get_harness(name)
    assert harness.info().uses_model
    harness.check_variant(VariantSpec(harness=name, options={"permissions": "full"}))
    with pytest.raises(UserError, match="unknown option"):
        harness.check_variant(VariantSpec(harness=name, options={"temprature": 0}))
    with pytest.raises(UserError, match="effort"):
        harness.check_variant(VariantSpec(harness=name, effort="ludicrous"))
    with pytest.raises(UserError, match="permissions"):
        harness.check_variant(VariantSpec(harness=name, options={"permissions": "some"}))


def test_effort_ladders_and_turn_limits_are_each_clis_own() -> None:
    get_harness("claude").check_variant(VariantSpec(harness="claude", effort="max"))
    get_harness("codex").check_variant(VariantSpec(harness="codex", effort="xhigh"))
    get_harness("pi").check_variant(VariantSpec(harness="pi", effort="off"))
    with pytest.raises(UserError, match=r"low, medium, high, xhigh$"):
        get_harness("codex").check_variant(VariantSpec(harness="codex", effort="max"))
    with pytest.raises(UserError, match="no reasoning-effort setting"):
        get_harness("gemini").check_variant(VariantSpec(harness="gemini", effort="high"))
    get_harness("qwen").check_variant(VariantSpec(harness="qwen", options={"max_turns": 5}))
    with pytest.raises(UserError, match="no turn limit"):
        get_harness("codex").check_variant(VariantSpec(harness="codex", options={"max_turns": 5}))
    with pytest.raises(UserError, match="whole number"):
        get_harness("claude").check_variant(VariantSpec(harness="claude", options={"max_turns": 0}))
    with pytest.raises(UserError, match="speaks the Gemini API"):
        get_harness("gemini").check_variant(
            VariantSpec(harness="gemini", options={"endpoint": {"openai": "http://x/v1"}})
        )
    with pytest.raises(UserError, match="another model server"):
        get_harness("cursor").check_variant(
            VariantSpec(harness="cursor", options={"endpoint": {"openai": "http://x/v1"}})
        )
    with pytest.raises(UserError, match="files"):
        get_harness("aider").check_variant(VariantSpec(harness="aider", options={"files": 3}))


def test_repeating_errors_are_classified() -> None:
    assert fatal_kind("Not logged in · Please run /login") == "login"
    assert fatal_kind("error: unexpected argument '--full-auto' found") == "version"
    assert fatal_kind("Traceback: KeyError 'x'") is None


def test_only_claude_and_codex_resume_and_only_a_session_that_left_its_log(
    tmp_path: Path,
) -> None:
    assert [name for name in REAL_CLIS if can_resume(get_harness(name))] == ["claude", "codex"]
    # A stand-in run: the adapters read only its HOME and session id here.
    run: Any = SimpleNamespace(home=tmp_path, session_id="s1")
    claude, codex = get_harness("claude"), get_harness("codex")
    assert isinstance(claude, AgentCli) and isinstance(codex, AgentCli)
    assert claude.earlier_log(run) is None and codex.earlier_log(run) is None
    project = tmp_path / ".claude" / "projects" / "-ws"
    (project / "s1" / "subagents").mkdir(parents=True)
    (project / "s1.jsonl").write_text('{"a": 1}\n{"b": 2}\n')
    (project / "s1" / "subagents" / "x.jsonl").write_text('{"c": 3}\n')
    assert claude.earlier_log(run) == EarlierLog(2, frozenset(project.glob("s1/**/*.jsonl")))
    rollout = tmp_path / ".codex" / "sessions" / "2026" / "rollout-1.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_text('{"type": "session_meta"}\n' * 3)
    assert codex.earlier_log(run) == EarlierLog(3)
