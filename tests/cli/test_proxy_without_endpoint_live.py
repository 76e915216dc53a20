"""Real CLIs run with an API key and no ``endpoint`` still send their model calls through
harnessdrive's proxy: the variable that sets the CLI's base URL is pointed at the proxy, which
forwards to the URL the caller set there (here the scripted model server, standing in for the
vendor). Without that, "could not run" would have no outside evidence for these CLIs."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.proxy import CALLS_FILE, ProxiedCall
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.model_server import ModelServer, Script, Turn, WriteFile
from tests.cli.conftest import cli_binary, run_trials
from tests.conftest import ADD_FIXED, add_task

pytestmark = pytest.mark.cli

SOLVE = Script(
    turns=(
        Turn(text="Fixing.", actions=(WriteFile(path="calc.py", content=ADD_FIXED),)),
        Turn(text="Done."),
    )
)
# Each CLI: its model, the base-URL variable it honours and the path under the server's root
# that variable names, the key variable, and any options it needs.
CASES = {
    "gemini": ("gemini-2.5-flash", "GOOGLE_GEMINI_BASE_URL", "", "GEMINI_API_KEY", {}),
    "aider": (
        "openai/mock-model",
        "OPENAI_API_BASE",
        "/v1",
        "OPENAI_API_KEY",
        {"edit_format": "diff", "files": "all"},
    ),
}


@pytest.mark.parametrize("harness", sorted(CASES))
def test_an_api_key_run_goes_through_the_proxy(
    harness: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, variable, path, key, options = CASES[harness]
    with ModelServer(SOLVE) as server:
        monkeypatch.setenv(variable, server.base_url + path)
        monkeypatch.setenv(key, "test-key")
        variant = VariantSpec(
            harness=harness,
            name=harness,
            model=model,
            options={"binary": str(cli_binary(harness)), **options},
        )
        _, records = run_trials(
            tmp_path, [add_task()], [variant], allow_unpriced=frozenset({harness}), max_usd=1.0
        )
        answered = len(server.turns())
    (record,) = records
    result = record.result
    assert (result.status, result.outcome) == ("completed", "pass"), result.agent
    assert answered >= 1
    calls = [
        ProxiedCall.model_validate_json(line)
        for line in (record.folder / CALLS_FILE).read_text().splitlines()
    ]
    # Every call the server answered went through the proxy, on the path the CLI asked for.
    assert len([c for c in calls if c.status == 200]) >= answered
    traffic = result.agent.traffic
    assert traffic is not None and traffic.reached_model and traffic.last_status == 200
