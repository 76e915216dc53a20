"""Shared pieces of the `cli` tests: the pinned CLIs, and how to run one through the runner."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessdrive.demo.scripted import scripted_prices
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, RunSummary, execute
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import load_suite
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing import clis
from harnessdrive.testing.model_server import Usage as ScriptUsage
from harnessdrive.testing.suites import TaskFiles, write_suite
from harnessdrive.transcript.models import Transcript, Usage

# Harness name -> the name of its pin in harnessdrive.testing.clis.
PINS = {
    "claude": "claude",
    "codex": "codex",
    "gemini": "gemini",
    "opencode": "opencode",
    "pi": "pi",
    "qwen": "qwen",
    "aider": "aider",
    "mini-swe-agent": "mini",
}


def cli_binary(harness: str) -> Path:
    """The pinned CLI of a harness; installed on first use (a stamped install is a no-op)."""
    pin = PINS[harness]
    if not clis.is_installed(pin):
        clis.install([pin])
    return clis.binary(pin)


def transcript_usage(usage: ScriptUsage) -> Usage:
    """What the server sent, in the transcript's tiers: output includes reasoning."""
    return Usage(
        input=usage.input,
        cache_read=usage.cache_read,
        cache_write=usage.cache_write,
        cache_write_1h=usage.cache_write_1h,
        output=usage.output + usage.reasoning,
        reasoning=usage.reasoning,
    )


@dataclass(frozen=True)
class TrialRecord:
    """One recorded trial, read back from the results folder as a report would read it."""

    result: TrialResult
    folder: Path

    @property
    def transcript(self) -> Transcript:
        return Transcript.model_validate_json((self.folder / "transcript.json").read_text())


def run_trials(
    tmp_path: Path,
    tasks: list[TaskFiles],
    variants: list[VariantSpec],
    *,
    jobs: int = 1,
    **options: Any,
) -> tuple[RunSummary, list[TrialRecord]]:
    """Run the variants on the tasks through the real runner; results read back from disk."""
    suite = load_suite(write_suite(tmp_path, tasks))
    plan = make_plan(suite, tuple(variants), 1)
    results = tmp_path / "results"
    # The scripted model is on 127.0.0.1: the agents need no other network. Its models are
    # priced at zero, as the demo prices them, unless the caller gives price_records.
    models = [v.model for v in variants if v.model]
    options.setdefault("price_records", scripted_prices(models))
    run_options = RunOptions(results=results, jobs=jobs, network="loopback", **options)
    summary = execute(plan, run_options)
    records = []
    for path in sorted(results.glob("trials/*/*/*/r*/result.json")):
        result = TrialResult.model_validate_json(path.read_text())
        records.append(TrialRecord(result, path.parent))
    return summary, records


def endpoint_for(root: str, **extra: Any) -> Mapping[str, Any]:
    """An ``endpoint`` option pointing every protocol at a scripted server's root URL."""
    return {
        "anthropic": root,
        "openai": f"{root}/v1",
        "gemini": root,
        "provider": "scripted",
        "max_retries": 0,
        **extra,
    }
