"""Adapters against fake executables: a broken install, and runs that leave no log of their own.

The fakes are shell scripts standing in for a CLI, run through the real trial runner.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.model_server import ModelServer, Script, Turn
from tests.cli.conftest import run_trials
from tests.conftest import add_task


def unpriced(variant: VariantSpec) -> dict[str, object]:
    """Fake CLIs call no model: they run at $0, labelled unpriced, under a cap."""
    return {"allow_unpriced": frozenset({variant.harness}), "max_usd": 1.0}


STUB = """#!/bin/sh
echo "Error: claude native binary not installed (the postinstall script was not run)" >&2
exit 1
"""
# Answers pi's --help with the flags the adapter passes, then "works" and exits 0.
FAKE_PI = """#!/bin/sh
if [ "$1" = "--version" ]; then echo 0.73.1; exit 0; fi
if [ "$1" = "--help" ]; then
  echo "--print --mode --provider --model --thinking --session-dir"; exit 0
fi
while [ $# -gt 0 ]; do [ "$1" = "--session-dir" ] && dir="$2"; shift; done
echo '{"type":"session","version":3,"id":"announced-id"}'
if [ -n "$WRITE_LOG_AS" ]; then
  mkdir -p "$dir"; echo "{\\"type\\":\\"session\\",\\"id\\":\\"$WRITE_LOG_AS\\"}" > "$dir/s.jsonl"
fi
exit 0
"""


def fake(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / "fakes" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)
    return str(path)


def test_an_executable_that_does_not_run_asks_for_a_reinstall(tmp_path: Path) -> None:
    variant = VariantSpec(harness="claude", options={"binary": fake(tmp_path, "claude", STUB)})
    _, [record] = run_trials(tmp_path, [add_task()], [variant], **unpriced(variant))
    agent = record.result.agent
    assert record.result.status == "could_not_run"
    assert agent.error is not None and "native binary not installed" in agent.error
    assert agent.hint is not None and agent.hint.startswith("reinstall claude")


@pytest.mark.parametrize(
    ("log_as", "complaint"),
    [("", "no pi session file was written"), ("someone-else", "belongs to session")],
)
def test_a_run_without_its_own_session_log_is_never_graded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log_as: str, complaint: str
) -> None:
    monkeypatch.setenv("WRITE_LOG_AS", log_as)
    variant = VariantSpec(
        harness="pi", options={"binary": fake(tmp_path, "pi", FAKE_PI), "env": ["WRITE_LOG_AS"]}
    )
    _, [record] = run_trials(tmp_path, [add_task()], [variant], **unpriced(variant))
    assert (record.result.status, record.result.outcome) == ("could_not_run", "not_graded")
    assert record.result.agent.error is not None
    assert complaint in record.result.agent.error


# Answers claude's --version and --help, then plays one run: one request through the model
# proxy (as a real run makes), a main session whose log holds two calls, one subagent with its
# own log (one call), and a context compaction on the stream.
FAKE_CLAUDE = f"""#!{sys.executable}
import json, os, sys, urllib.request
from pathlib import Path

if sys.argv[1:] == ["--version"]:
    print("2.1.332 (Claude Code)")
    sys.exit(0)
if sys.argv[1:] == ["--help"]:
    print("-p --output-format --verbose --model --effort --permission-mode --allowedTools")
    print("--dangerously-skip-permissions --session-id --resume --max-budget-usd")
    sys.exit(0)
sid = sys.argv[sys.argv.index("--session-id") + 1]
body = json.dumps({{"model": "claude-sonnet-4-5", "max_tokens": 10,
                   "messages": [{{"role": "user", "content": "fix it"}}]}}).encode()
request = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", data=body,
    headers={{"content-type": "application/json", "x-api-key": os.environ["ANTHROPIC_API_KEY"],
              "anthropic-version": "2023-06-01"}})
urllib.request.urlopen(request, timeout=30).read()

def call(key, model, tokens, at="2026-12-01T10:00:00Z"):
    message = {{"id": key, "model": model, "content": [],
               "usage": {{"input_tokens": tokens, "output_tokens": 5}}}}
    line = {{"type": "assistant", "sessionId": sid, "message": message, "timestamp": at}}
    return json.dumps(line) + "\\n"

log = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "-ws" / f"{{sid}}.jsonl"
(log.parent / sid / "subagents").mkdir(parents=True)
log.write_text(call("m1", "claude-sonnet-4-5", 100) + call("m2", "claude-sonnet-4-5", 200))
later = "2026-12-01T10:01:30Z"
subagent = call("s1", "claude-haiku-4-5", 700) + call("s2", "claude-haiku-4-5", 1, at=later)
(log.parent / sid / "subagents" / "agent-a1.jsonl").write_text(subagent)
boundary = {{"trigger": "auto", "pre_tokens": 150000}}
print(json.dumps({{"type": "system", "subtype": "compact_boundary", "compact_metadata": boundary}}))
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "num_turns": 2,
                  "result": "done"}}))
"""


def test_claude_subagent_calls_and_compactions_are_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = fake(tmp_path, "claude", FAKE_CLAUDE)
    variant = VariantSpec(harness="claude", model="claude-sonnet-4-5", options={"binary": binary})
    with ModelServer(Script(turns=(Turn(text="Done."),))) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        _, [record] = run_trials(tmp_path, [add_task()], [variant], **unpriced(variant))
    assert record.result.status == "completed", record.result.agent.error
    transcript = record.transcript
    assert [(c.model, c.usage.input, c.agent) for c in transcript.calls] == [
        ("claude-sonnet-4-5", 100, None),
        ("claude-sonnet-4-5", 200, None),
        ("claude-haiku-4-5", 700, "agent-a1"),
        ("claude-haiku-4-5", 1, "agent-a1"),
    ]
    [span] = [e for e in transcript.events if "subagent" in e.data]
    assert span.data == {"subagent": "agent-a1", "seconds": 90.0}
    [compaction] = [e for e in transcript.events if "compaction" in e.data]
    assert compaction.data == {"compaction": "auto", "prompt_tokens": 150000}
