"""``result.json``: the record of one trial, the source of truth of every report.

Documented field by field in docs/results.md. ``schema`` changes whenever a field changes meaning.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harnessdrive.grading.verdict import Outcome, StreamKept, Verdict
from harnessdrive.proxy.traffic import Traffic
from harnessdrive.store.provenance import Provenance, Suppliers
from harnessdrive.store.result_cost import Cost, CostSource
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Usage
from harnessdrive.workspace.names import NameText, model_json

RESULT_SCHEMA = "harnessdrive-result-5"
"""2 added the suite's identity and version and harnessdrive's version; 3 holds the agent run,
diff and grading in ``rounds`` and adds the trial's score, metrics and totals; 5 records the
protocol and the plugins that supplied the trial's parts, and keeps a grader kind's own data in
the verdict's ``details``. Files of 1 and 2 still load: their one attempt becomes round 1."""

__all__ = [
    "RESULT_SCHEMA",
    "AgentSummary",
    "Cost",
    "CostSource",
    "DiffStats",
    "RoundRecord",
    "Status",
    "Timing",
    "Totals",
    "TrialResult",
]

Status = Literal["completed", "timeout", "crashed", "could_not_run", "interrupted", "skipped"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Timing(_Model):
    setup: float = 0.0
    agent: float = 0.0
    grading: float = 0.0
    total: float = 0.0
    overhead: float = 0.0
    """Seconds spent outside the setup, agent and test commands: our own machinery."""


class DiffStats(_Model):
    files_changed: int = 0
    lines_added: int = 0
    lines_deleted: int = 0
    paths: tuple[NameText, ...] = ()
    """Changed file names; raw bytes that are not UTF-8 are escaped in JSON (docs/results.md)."""
    patch_bytes: int | None = None
    """Size of the whole patch; ``diff.patch`` keeps its first part when this is larger."""

    @property
    def lines_changed(self) -> int:
        return self.lines_added + self.lines_deleted


class AgentSummary(_Model):
    exit_code: int | None = None
    error: str | None = None
    hint: str | None = None
    model: str | None = None
    turns: int | None = None
    tool_calls: int = 0
    calls: int = 0
    usage: Usage = Usage()
    permission_denials: int = 0
    stdout: StreamKept | None = None
    """How much the agent printed to stdout, and whether ``agent.stdout`` keeps only part."""
    stderr: StreamKept | None = None
    traffic: Traffic | None = None
    """The model calls harnessdrive's proxy forwarded (status, usage), when they went
    through it; each call is in ``model-calls.jsonl``."""


class RoundRecord(_Model):
    """One round of a trial: the agent's run, the change it left and how it was graded.

    A single attempt is one round. A protocol with several rounds keeps round 1's files at the
    trial folder's top and round N's under ``rounds/N/`` (store/paths.py)."""

    number: int = 1
    status: Status
    """What happened to the machinery in this round (the trial's status for one round)."""
    outcome: Outcome = "not_graded"
    agent: AgentSummary = AgentSummary()
    diff: DiffStats = DiffStats()
    grading: Verdict | None = None
    seconds: Timing = Timing()
    note: str | None = None


class RetryEvent(_Model):
    """A try of the trial that was run again: the provider refused it for load (as the proxy
    saw), or the machine running it was lost. Its files are under ``retries/N/``."""

    reason: Literal["rate_limited", "worker_lost"]
    detail: str = ""
    """What was seen (the provider's status as the proxy saw it, the executor's error)."""
    status: Status | None = None
    """The try's status."""
    outcome: Outcome | None = None
    """The try's verdict, kept: a try graded ``fail`` keeps the trial from being "not
    counted"."""
    waited_seconds: float = 0.0
    """The pause before the next try (backoff with jitter)."""
    at: str = ""


class Totals(_Model):
    """Sums over a trial's rounds."""

    rounds: int = 0
    agent_seconds: float = 0.0
    turns: int = 0
    tool_calls: int = 0
    usage: Usage = Usage()

    @classmethod
    def over(cls, rounds: tuple[RoundRecord, ...]) -> Totals:
        """The sums over ``rounds``."""
        usage = Usage()
        for record in rounds:
            usage = usage + record.agent.usage
        return cls(
            rounds=len(rounds),
            agent_seconds=sum(r.seconds.agent for r in rounds),
            turns=sum(r.agent.turns or 0 for r in rounds),
            tool_calls=sum(r.agent.tool_calls for r in rounds),
            usage=usage,
        )


class TrialResult(_Model):
    schema_: str = Field(default=RESULT_SCHEMA, alias="schema")
    trial_id: str
    run_id: str | None = None
    attempt: int = 1
    suite: str
    task: str
    task_title: str = ""
    task_fingerprint: str
    variant: VariantSpec
    variant_label: str
    harness: str
    harness_version: str | None = None
    protocol: str | None = None
    """The trial protocol that ran it (``single``, ``improve``, ``known-change``); None in files
    written before it was recorded."""
    repetition: int
    status: Status
    outcome: Outcome
    started: str
    finished: str
    seconds: Timing = Timing()
    rounds: tuple[RoundRecord, ...] = ()
    """Every round, in order; empty for a skipped trial."""
    score: float | None = Field(default=None, ge=0, le=1)
    """The trial's score in [0, 1] where its grader gives one."""
    metrics: dict[str, float] = Field(default_factory=dict)
    """Named numbers the grader measured (an objective's value, per-rule rates)."""
    totals: Totals = Totals()
    cost: Cost = Cost()
    sandbox: str = "none"
    base_commit: str | None = None
    base_source: str | None = None
    workspace: str | None = None
    """The agent's workspace, kept only with ``--keep``."""
    note: str | None = None
    suite_id: str | None = None
    """The suite's identity, ``<suite>@<hash of its folder>``; None in files before schema 2."""
    suite_folder: str | None = None
    suite_version: str | None = None
    """A hash of the suite's spec and its tasks' fingerprints when the trial was planned."""
    harnessdrive_version: str | None = None
    provenance: Provenance | None = None
    """What made this trial's arm what it was (CLI version, config and instruction hashes, tool
    allow-list, reported models, sandbox); None in files written before it was recorded."""
    retries: tuple[RetryEvent, ...] = ()
    """Tries that did not count (rate limits, lost workers), oldest first."""
    plugins: Suppliers | None = None
    """The distribution and version that supplied the harness, the grader kind and the
    protocol; None where the trial never ran and in files written before it was recorded."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _one_round_before_schema_3(cls, data: Any) -> Any:
        """Files of schema 1 and 2 kept the one attempt's agent, diff and grading at the top."""
        if not isinstance(data, dict) or "rounds" in data:
            return data
        if not any(key in data for key in ("agent", "diff", "grading")):
            return data
        data = dict(data)
        agent, diff = data.pop("agent", None), data.pop("diff", None)
        grading = data.pop("grading", None)
        if data.get("status") == "skipped":
            return data  # a skipped trial never had a round
        first = {
            "status": data.get("status", "interrupted"),
            "outcome": data.get("outcome", "not_graded"),
            "agent": agent or {},
            "diff": diff or {},
            "grading": grading,
            "seconds": data.get("seconds", {}),
        }
        data["rounds"] = [first]
        if "totals" not in data:
            data["totals"] = Totals.over((RoundRecord.model_validate(first),))
        return data

    def revised(self, **changes: Any) -> TrialResult:
        """This result with ``changes``, validated as a new one would be: a misspelt field or
        a value of the wrong type is an error here, never silently dropped or stored."""
        unknown = sorted(set(changes) - set(type(self).model_fields))
        if unknown:
            raise TypeError(f"TrialResult has no field {', '.join(unknown)}")
        fields = {name: getattr(self, name) for name in type(self).model_fields}
        return type(self).model_validate({**fields, **changes})

    def with_final_round(self, **update: Any) -> TrialResult:
        """A copy whose last round has ``update`` applied (``agent=``, ``grading=``, ...)."""
        last = self.final_round or RoundRecord(status=self.status, outcome=self.outcome)
        unknown = sorted(set(update) - set(RoundRecord.model_fields))
        if unknown:
            raise TypeError(f"RoundRecord has no field {', '.join(unknown)}")
        round_fields = {name: getattr(last, name) for name in RoundRecord.model_fields}
        final = RoundRecord.model_validate({**round_fields, **update})
        return self.revised(rounds=(*self.rounds[:-1], final))

    @property
    def final_round(self) -> RoundRecord | None:
        return self.rounds[-1] if self.rounds else None

    @property
    def agent(self) -> AgentSummary:
        """The last round's agent run (what a single attempt's reports show)."""
        return self.rounds[-1].agent if self.rounds else AgentSummary()

    @property
    def diff(self) -> DiffStats:
        return self.rounds[-1].diff if self.rounds else DiffStats()

    @property
    def grading(self) -> Verdict | None:
        """The deciding verdict: the last round's."""
        return self.rounds[-1].grading if self.rounds else None

    def to_json(self) -> str:
        # A raw byte of a file name in a free-text field (an error message, say) is written the
        # way names are, so the record is never lost (docs/results.md).
        return model_json(self, by_alias=True)
