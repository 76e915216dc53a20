"""Scripted agents that spend (pretend) model tokens, for testing pricing and the spend cap.

Load one by dotted path as a harness name: ``harnessdrive.testing.agents:SpendingAgent``. What
it reports comes from the variant's ``options``, for example in a suite.toml::

    [[variants]]
    harness = "harnessdrive.testing.agents:SpendingAgent"
    name = "spender"
    model = "claude-sonnet-4-5"
    options = { calls = [{ input = 1000, cache_read = 50000, output = 2000 },
                         { model = "claude-haiku-4-5", input = 300, output = 40 }],
                reported_usd = 0.21, seconds = 0.2 }

Options (all optional):

- ``calls``: the model calls it reports, each ``{model, provider, input, cache_read,
  cache_write, cache_write_1h, output, reasoning}``; ``model`` defaults to the variant's model;
- ``reported_usd``: the harness's own cost figure;
- ``billing``: ``"api"`` or ``"subscription"``;
- ``models``: the models it says it will use before running (``["m"]`` or
  ``[{model, provider}]``); default: the variant's model and the models of ``calls``;
- ``seconds``: how long it works before it reports (it can be stopped or time out meanwhile);
- ``hang``: work until the time limit or a stop;
- ``partial_calls``: the calls it reports when it is cut off (default: none, so no usage
  record);
- ``solve`` (default true): apply the task's reference solution; false changes nothing;
- ``exit_code`` (default 0); ``could_not_run``: fail at once like a missing login;
- ``uses_model`` (default true);
- ``rate_limited``: its first N runs of each task and variant in this process fail as a CLI
  does when its provider answers 429, with the proxy's record of that refusal (for the
  rate-limit retries).

It writes ``spender.json`` into the trial folder with the budget it was offered and when it
began and ended its work (``time.time()``, to check how many ran at once).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from harnessdrive.errors import UserError
from harnessdrive.harnesses.base import (
    AgentRequest,
    AgentRun,
    HarnessInfo,
    ModelPlan,
    PlannedModel,
)
from harnessdrive.harnesses.scripted import run_as_agent
from harnessdrive.proxy.traffic import ProxiedCall, Traffic
from harnessdrive.sandbox.clock import now
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Event, ModelCall, Transcript, Usage
from harnessdrive.workspace.solution import apply_solution

SPENDER_LOG = "spender.json"
RATE_LIMIT_ANSWER = (
    'API Error: 429 {"type":"error","error":{"type":"rate_limit_error",'
    '"message":"Number of requests has exceeded your rate limit"}}'
)
"""What a CLI prints when its provider's 429 outlasts its own retries."""
SCRIPTED_UPSTREAM = "https://provider.invalid"
_REFUSED_CALL = ProxiedCall(
    method="POST", path="/v1/messages", generation=True, status=429, started=0.0, seconds=0.01
)
"""What the proxy records of a request the provider refused for load."""
_REFUSED: dict[tuple[str, str], int] = {}
_REFUSED_LOCK = threading.Lock()
_FOREVER = 86_400


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScriptedCall(_Options):
    model: str | None = None
    provider: str | None = None
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0
    output: int = 0
    reasoning: int = 0

    def to_call(self, default_model: str | None) -> ModelCall:
        model = self.model or default_model
        if model is None:
            raise UserError("a SpendingAgent call needs a 'model' (or a variant model)")
        usage = Usage(
            input=self.input,
            cache_read=self.cache_read,
            cache_write=self.cache_write,
            cache_write_1h=self.cache_write_1h,
            output=self.output,
            reasoning=self.reasoning,
        )
        return ModelCall(model=model, usage=usage, provider=self.provider)


class PlannedName(_Options):
    model: str
    provider: str | None = None


class SpenderOptions(_Options):
    calls: tuple[ScriptedCall, ...] = ()
    reported_usd: float | None = None
    billing: Literal["api", "subscription"] | None = None
    models: tuple[PlannedName, ...] | None = None
    seconds: float = 0.0
    hang: bool = False
    partial_calls: tuple[ScriptedCall, ...] = ()
    solve: bool = True
    exit_code: int = 0
    could_not_run: bool = False
    uses_model: bool = True
    rate_limited: int = 0

    @field_validator("models", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return [{"model": item} if isinstance(item, str) else item for item in value]
        return value


def spender_options(variant: VariantSpec) -> SpenderOptions:
    try:
        return SpenderOptions.model_validate(variant.options)
    except ValidationError as exc:
        detail = "; ".join(
            f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors()
        )
        raise UserError(f"variant {variant.label}: bad SpendingAgent options: {detail}") from None


class SpendingAgent:
    """Reports scripted model calls and costs; solves the task with its reference solution."""

    name = "spender"
    options_model = SpenderOptions

    def info(self) -> HarnessInfo:
        return HarnessInfo(
            name=self.name,
            installed=True,
            version="scripted",
            detail="reports scripted model calls (a test double for pricing and the spend cap)",
            uses_model=True,
        )

    def check_variant(self, variant: VariantSpec) -> None:
        options = spender_options(variant)
        for call in (*options.calls, *options.partial_calls):
            call.to_call(variant.model)

    def plan_models(self, variant: VariantSpec) -> ModelPlan:
        options = spender_options(variant)
        if not options.uses_model:
            return ModelPlan()
        if options.models is not None:
            planned = [PlannedModel(m.model, m.provider) for m in options.models]
            return ModelPlan(tuple(planned), source="options.models", billing=options.billing)
        names: dict[tuple[str, str | None], None] = {}
        if variant.model:
            names[(variant.model, None)] = None
        for call in options.calls:
            names.setdefault((call.model or variant.model or "", call.provider), None)
        planned = [PlannedModel(model, provider) for model, provider in names if model]
        return ModelPlan(tuple(planned), source="options.calls", billing=options.billing)

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        options = spender_options(request.variant)
        request.logs.mkdir(parents=True, exist_ok=True)
        log = {"budget_usd": request.budget_usd, "began": time.time()}
        (request.logs / SPENDER_LOG).write_text(json.dumps(log))
        if options.could_not_run:
            request.stderr.write_text("error: not logged in\n")
            return AgentRun(
                exit_code=1,
                timed_out=False,
                seconds=now() - started,
                error="not logged in",
                could_not_run=True,
                version="scripted",
            )
        if self._refused(request, options.rate_limited):
            request.stderr.write_text(RATE_LIMIT_ANSWER + "\n")
            return AgentRun(
                exit_code=1,
                timed_out=False,
                seconds=now() - started,
                version="scripted",
                traffic=Traffic.of(SCRIPTED_UPSTREAM, (_REFUSED_CALL,)),
            )
        timed_out = stopped = False
        if options.hang or options.seconds > 0:
            seconds = _FOREVER if options.hang else options.seconds
            waited = run_as_agent(request, ["sleep", f"{seconds:g}"])
            timed_out, stopped = waited.timed_out, waited.stopped
        cut_off = timed_out or stopped
        scripted = options.partial_calls if cut_off else options.calls
        calls = tuple(call.to_call(request.variant.model) for call in scripted)
        touched = []
        if options.solve and not cut_off:
            touched = apply_solution(request.task, request.workspace)
        request.stdout.write_text("spent some tokens\n")
        (request.logs / SPENDER_LOG).write_text(json.dumps({**log, "ended": time.time()}))
        return AgentRun(
            exit_code=None if cut_off else options.exit_code,
            timed_out=timed_out,
            stopped=stopped,
            seconds=now() - started,
            transcript=Transcript(
                events=tuple(Event(kind="file_change", text=path) for path in touched),
                calls=calls,
                model=_main_model(calls),
                turns=len(calls),
                reported_cost_usd=None if cut_off else options.reported_usd,
                billing=options.billing,
            ),
            version="scripted",
        )

    @staticmethod
    def _refused(request: AgentRequest, times: int) -> bool:
        if times <= 0:
            return False
        key = (str(request.task.folder), request.variant.label)
        with _REFUSED_LOCK:
            seen = _REFUSED.get(key, 0)
            _REFUSED[key] = seen + 1
        return seen < times


def _main_model(calls: tuple[ModelCall, ...]) -> str | None:
    """The model with the most tokens, as adapters report it."""
    totals: dict[str, int] = {}
    for call in calls:
        totals[call.model] = totals.get(call.model, 0) + call.usage.total
    return max(totals, key=lambda model: totals[model]) if totals else None
