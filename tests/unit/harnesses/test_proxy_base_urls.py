"""goose run with an API key and no ``endpoint`` sends its model calls through harnessdrive's
proxy: its ``OPENAI_HOST`` names the proxy, which forwards to the host the caller set (here the
scripted model server, standing in for OpenAI). goose cannot be installed here, so a stand-in
executable does what goose's OpenAI provider does with that variable: it posts to
``$OPENAI_HOST/v1/chat/completions``. A provider that variable does not reach (aider's and
goose's others) keeps the run off the proxy."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.registry import get_harness
from harnessdrive.proxy import CALLS_FILE, ProxiedCall
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.model_server import ModelServer, Script, Turn
from tests.cli.conftest import run_trials
from tests.conftest import ADD_FIXED, add_task

FAKE_GOOSE = f"""#!{sys.executable}
import json, os, sys, urllib.request

if sys.argv[1:] == ["--version"]:
    print("goose 1.0.0")
elif sys.argv[1:] == ["run", "--help"]:
    print("--instructions --output-format --name --provider --model --max-turns")
else:
    body = json.dumps({{"model": "gpt-4o-mini",
                       "messages": [{{"role": "user", "content": "fix it"}}]}}).encode()
    request = urllib.request.Request(
        os.environ["OPENAI_HOST"] + "/v1/chat/completions", data=body,
        headers={{"content-type": "application/json",
                  "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]}})
    urllib.request.urlopen(request, timeout=30).read()
    open("calc.py", "w").write({ADD_FIXED!r})
    print(json.dumps({{"type": "complete", "total_tokens": 2, "input_tokens": 1,
                      "output_tokens": 1}}))
"""


def test_goose_without_an_endpoint_goes_through_the_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    goose = tmp_path / "goose"
    goose.write_text(FAKE_GOOSE)
    goose.chmod(0o755)
    with ModelServer(Script(turns=(Turn(text="Done."),))) as server:
        monkeypatch.setenv("GOOSE_PROVIDER", "openai")
        monkeypatch.setenv("OPENAI_HOST", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        variant = VariantSpec(
            harness="goose", name="goose", model="gpt-4o-mini", options={"binary": str(goose)}
        )
        _, records = run_trials(
            tmp_path, [add_task()], [variant], allow_unpriced=frozenset({"goose"}), max_usd=1.0
        )
    (record,) = records
    result = record.result
    assert (result.status, result.outcome) == ("completed", "pass"), result.agent
    calls = [
        ProxiedCall.model_validate_json(line)
        for line in (record.folder / CALLS_FILE).read_text().splitlines()
    ]
    assert [(c.path, c.status) for c in calls] == [("/v1/chat/completions", 200)]
    traffic = result.agent.traffic
    assert traffic is not None and traffic.reached_model


def test_a_provider_the_base_url_variable_does_not_reach_bypasses_the_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The proxy would see no call from these and call a run that reached its model "could not
    # run": they are graded on their work, as before.
    aider = get_harness("aider")
    assert isinstance(aider, AgentCli)
    openai = VariantSpec(harness="aider", model="openai/gpt-4o-mini")
    assert aider.base_url_setting(openai) == ("OPENAI_API_BASE", "https://api.openai.com/v1")
    other = VariantSpec(harness="aider", model="anthropic/claude-sonnet-4-5")
    assert aider.base_url_setting(other) is None
    goose = get_harness("goose")
    assert isinstance(goose, AgentCli)
    monkeypatch.setenv("GOOSE_PROVIDER", "anthropic")
    assert goose.base_url_setting(VariantSpec(harness="goose")) is None
    monkeypatch.setenv("GOOSE_PROVIDER", "openai")
    assert goose.base_url_setting(VariantSpec(harness="goose")) == (
        "OPENAI_HOST",
        "https://api.openai.com",
    )
