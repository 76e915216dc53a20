"""Errors that repeat on every task: each gives ``could_not_run`` with a fix, and the run goes on.

Three broken variants run beside the reference agent on two tasks: pi not installed at all, a
``codex`` on PATH whose ``--help`` lacks the flags this adapter passes (an old version), and the
real Claude Code with no key and no login. Each one's first trial is ``could_not_run`` with a
hint, its second is skipped with that hint, and the reference agent still passes both tasks.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harnessdrive.errors import UserError
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.suites import TaskFiles
from tests.cli.conftest import cli_binary, run_trials
from tests.conftest import add_task

pytestmark = pytest.mark.cli

OLD_CODEX = """#!/bin/sh
case "$1" in
  --version) echo "codex-cli 0.1.2" ;;
  exec) printf 'Usage: codex exec [OPTIONS] [PROMPT]\n  -m, --model <MODEL>\n  --json\n' ;;
  *) echo "unknown" >&2; exit 2 ;;
esac
"""


def test_missing_old_and_signed_out_clis_are_could_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    codex = fake_bin / "codex"
    codex.write_text(OLD_CODEX)
    codex.chmod(0o755)
    # Only system folders and the fake codex: no pi anywhere, no binary variables, no keys.
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}/usr/bin{os.pathsep}/bin")
    for name in list(os.environ):
        if name.startswith("HARNESSDRIVE_") and name.endswith("_BINARY"):
            monkeypatch.delenv(name)
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    claude = cli_binary("claude")
    # And no pinned install of any CLI: the only cache searched is an empty one.
    monkeypatch.setenv("HARNESSDRIVE_CLI_CACHE", str(tmp_path / "no-clis"))
    variants = [
        VariantSpec(harness="pi", name="not-installed"),
        VariantSpec(harness="codex", name="old-version"),
        VariantSpec(harness="claude", name="signed-out", options={"binary": str(claude)}),
        VariantSpec(harness="reference"),
    ]
    tasks: list[TaskFiles] = [add_task("first"), add_task("second")]

    # None of them gets as far as a model, so none has a price: allowed at $0 under a cap.
    broken = frozenset({"not-installed", "old-version", "signed-out"})
    summary, records = run_trials(tmp_path, tasks, variants, allow_unpriced=broken, max_usd=1.0)

    by_trial = {(r.result.variant_label, r.result.task): r.result for r in records}
    assert {key: result.status for key, result in by_trial.items()} == {
        ("not-installed", "first"): "could_not_run",
        ("not-installed", "second"): "skipped",
        ("old-version", "first"): "could_not_run",
        ("old-version", "second"): "skipped",
        ("signed-out", "first"): "could_not_run",
        ("signed-out", "second"): "skipped",
        ("reference", "first"): "completed",
        ("reference", "second"): "completed",
    }
    assert {by_trial["reference", task].outcome for task in ("first", "second")} == {"pass"}

    missing = by_trial["not-installed", "first"].agent
    assert missing.error is not None and "not found (no pinned install, not on PATH)" in (
        missing.error
    )
    assert missing.hint is not None and "harnessdrive install-clis pi" in missing.hint
    assert "HARNESSDRIVE_PI_BINARY" in missing.hint

    old = by_trial["old-version", "first"]
    assert old.harness_version == "0.1.2"
    assert old.agent.error is not None and "--skip-git-repo-check" in old.agent.error
    assert old.agent.hint is not None and "upgrade `codex`" in old.agent.hint
    assert "0.1.2" in old.agent.hint

    signed_out = by_trial["signed-out", "first"]
    assert signed_out.agent.error is not None and "Not logged in" in signed_out.agent.error
    assert signed_out.agent.hint is not None and signed_out.agent.hint.startswith("sign in")
    assert "ANTHROPIC_API_KEY" in signed_out.agent.hint
    assert signed_out.agent.calls == 0

    for label in ("not-installed", "old-version", "signed-out"):
        first = by_trial[label, "first"]
        assert summary.skipped_harnesses[label] == first.agent.hint
        assert by_trial[label, "second"].note == first.agent.hint
        assert first.outcome == "not_graded"


def test_a_cli_that_is_not_installed_is_named_before_its_missing_price(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A CLI that is not there cannot say which model it would use: the run stops on what is
    # missing, with its fix, not on a price file it does not need yet.
    monkeypatch.setenv("PATH", f"/usr/bin{os.pathsep}/bin")
    monkeypatch.delenv("HARNESSDRIVE_PI_BINARY", raising=False)
    monkeypatch.setenv("HARNESSDRIVE_CLI_CACHE", str(tmp_path / "no-clis"))
    variants = [VariantSpec(harness="pi"), VariantSpec(harness="reference")]
    with pytest.raises(UserError, match=r"^pi is not installed: .*harnessdrive install-clis pi"):
        run_trials(tmp_path, [add_task()], variants, max_usd=1.0)
    assert not (tmp_path / "results" / "trials").exists()
