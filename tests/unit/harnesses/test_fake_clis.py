"""Adapters against fake executables: a broken install, and runs that leave no log of their own.

The fakes are shell scripts standing in for a CLI, run through the real trial runner.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.tasks.models import VariantSpec
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
