"""The cost in result.json of each real agent CLI, checked to the cent against a hand computation.

Each CLI runs through the real trial runner against the scripted model, which reports a known
usage for every call. The models are priced by made-up records whose rates make the arithmetic
exact; the main model has a long-context tier above 20,000 prompt tokens, and one call of every
run is over it (another is exactly at it, which is not over). Where the CLI can bill a second
model in one run (a subagent on a cheaper model, or a call the API answered with another model),
the run does, and each model is billed at its own rates.

What each CLI can show, and so what each test covers:

- claude: a subagent on another model (the Agent tool with ``model = "haiku"``; its calls are in
  the subagent's own transcript), and one-hour cache writes, which only Anthropic reports apart.
- opencode: a subagent on another model (its task tool; the subagent's model comes from the
  repository's own ``opencode.json``, and its calls are in a child session).
- gemini: a subagent on another model (``invoke_agent`` with ``codebase_investigator``, which
  Gemini CLI runs on its own model; its calls are in the subagent's own chat file).
- pi, qwen, aider, mini-swe-agent: a call the API answered with another model; each logs the
  model the API reported.
- codex: one model only. It logs the model it asked for, never the one the API reported, so a
  reply from another model is billed at the pinned one, and ``codex exec`` offers no subagent
  tool (see docs/pricing.md).

Chat Completions and the Gemini API have no cache-write field, so a client of those sees the
scripted cache writes as fresh input, billed at the input rate; the arithmetic below follows
what each protocol shows.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.accounting import PriceRecord, PriceSource, Rates
from harnessdrive.harnesses.opencode import PROVIDER_ID as OPENCODE_PROVIDER
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.model_server import (
    EditFile,
    ModelServer,
    RawToolCall,
    Script,
    Shell,
    SideReply,
    Turn,
    Usage,
    WriteFile,
)
from harnessdrive.testing.suites import FAST_PYTEST, TaskFiles
from tests.cli.conftest import cli_binary, endpoint_for, run_trials

pytestmark = pytest.mark.cli

PROVIDER = "scripted"  # what endpoint_for names as the provider of every call
VALID_FROM = date(2025, 1, 1)
SOURCE = PriceSource(name="harnessdrive cost test")
THRESHOLD = 20_000


def rates(input: str, cache_read: str, write_5m: str, write_1h: str, output: str) -> Rates:
    return Rates(
        input=Decimal(input),
        cache_read=Decimal(cache_read),
        cache_write_5m=Decimal(write_5m),
        cache_write_1h=Decimal(write_1h),
        output=Decimal(output),
    )


# USD per million tokens: input, cache read, cache write 5 min, cache write 1 h, output.
MAIN_RATES = rates("30", "3", "37.5", "60", "150")
# Calls whose prompt (input + cache read + cache write) is over 20,000 tokens.
LONG_RATES = rates("60", "6", "75", "120", "225")
SECOND_RATES = rates("10", "1", "12.5", "20", "50")


def main_price(model: str) -> PriceRecord:
    return PriceRecord(
        provider=PROVIDER,
        model=model,
        rates=MAIN_RATES,
        long_context_threshold=THRESHOLD,
        long_context_rates=LONG_RATES,
        valid_from=VALID_FROM,
        source=SOURCE,
    )


def second_price(model: str) -> PriceRecord:
    return PriceRecord(
        provider=PROVIDER, model=model, rates=SECOND_RATES, valid_from=VALID_FROM, source=SOURCE
    )


MAIN = "main-model"
SECOND = "second-model"
# Claude Code 2.1.332 runs a subagent asked for "haiku" on this model id.
CLAUDE_HAIKU = "claude-haiku-5-5"
# Gemini CLI 0.61.0 runs its codebase investigator on this model when the main one is 2.5 Flash.
GEMINI_INVESTIGATOR = "gemini-2.5-pro"
# Codex offers apply_patch only to a model it knows; Claude Code and Gemini CLI get ids of
# their own vendors. All are billed at the made-up rates under the scripted provider.
MAIN_MODELS = {"claude": "claude-sonnet-4-5", "codex": "gpt-5.5", "gemini": "gemini-2.5-flash"}
PRICES = (
    *(main_price(model) for model in sorted({*MAIN_MODELS.values(), MAIN})),
    second_price(SECOND),
    second_price(CLAUDE_HAIKU),
    second_price(GEMINI_INVESTIGATOR),
)

# The scripted calls. Tokens as the script sends them; see each CLI's arithmetic below.
# Prompt 23,000 > 20,000: every tier of this call at the long rates.
LONG_USAGE = Usage(
    input=2_000,
    cache_read=20_000,
    cache_write=1_000,
    cache_write_1h=400,
    output=1_000,
    reasoning=200,
)
EDIT_USAGE = Usage(input=4_000, cache_read=10_000, output=500)  # prompt 14,000
RUN_USAGE = Usage(input=1_000, cache_read=15_000, cache_write=2_000, output=300, reasoning=100)
ANSWER_USAGE = Usage(input=500, cache_read=19_500, output=200)  # prompt exactly 20,000: normal
DELEGATE_USAGE = Usage(input=300, output=100)
SUBAGENT_USAGE = EDIT_USAGE  # the subagent's one call, on the second model

COMMAND = "grep -q 'x = 2' app.py && test -f hello.txt"
CREATE = Turn(
    text="Creating hello.txt.",
    actions=(WriteFile(path="hello.txt", content="hello world\n"),),
    usage=LONG_USAGE,
)
EDIT = Turn(
    text="Editing app.py.",
    actions=(EditFile(path="app.py", old="x = 1", new="x = 2"),),
    usage=EDIT_USAGE,
)
RUN = Turn(text="Running the check.", actions=(Shell(command=COMMAND),), usage=RUN_USAGE)
ANSWER = Turn(text="All done.", usage=ANSWER_USAGE)
# A call the API answered with the second model.
EDIT_BY_SECOND = EDIT.model_copy(update={"model": SECOND})
SUBAGENT_REPLY = SideReply(text="The helper looked and found nothing to add.", usage=SUBAGENT_USAGE)
CLAUDE_DELEGATE = Turn(
    text="Asking a helper.",
    actions=(
        RawToolCall(
            name="Agent",
            arguments={
                "description": "look around",
                "prompt": "List the files of the project.",
                "subagent_type": "general-purpose",
                "model": "haiku",
                "run_in_background": False,
            },
        ),
    ),
    usage=DELEGATE_USAGE,
)
OPENCODE_DELEGATE = Turn(
    text="Asking a helper.",
    actions=(
        RawToolCall(
            name="task",
            arguments={
                "description": "look around",
                "prompt": "List the files of the project.",
                "subagent_type": "general",
            },
        ),
    ),
    usage=DELEGATE_USAGE,
)
GEMINI_DELEGATE = Turn(
    text="Asking a helper.",
    actions=(
        RawToolCall(
            name="invoke_agent",
            arguments={
                "agent_name": "codebase_investigator",
                "prompt": "List the files of the project.",
            },
        ),
    ),
    usage=DELEGATE_USAGE,
)
# opencode's subagents run on the model the project's config gives them.
OPENCODE_CONFIG = {
    "agent": {"general": {"model": f"{OPENCODE_PROVIDER}/{SECOND}"}},
    "provider": {OPENCODE_PROVIDER: {"models": {SECOND: {"name": SECOND}}}},
}

HIDDEN_TEST = """\
from pathlib import Path


def test_created():
    assert Path("hello.txt").read_text() == "hello world\\n"


def test_edited():
    assert Path("app.py").read_text() == "x = 2\\n"
"""
TASK = TaskFiles(
    "priced-run",
    files={"app.py": "x = 1\n"},
    hidden={"tests/test_done.py": HIDDEN_TEST},
    command=FAST_PYTEST,
    visible_command=COMMAND,
    prompt="Create hello.txt, set x to 2 in app.py, then run the check.",
)


@dataclass(frozen=True)
class Case:
    """One CLI's priced run: its script, and the cost worked out by hand."""

    turns: tuple[Turn, ...]
    usd: float
    """The whole run, to the millionth."""
    by_model: dict[str, tuple[int, float]]
    """Calls and USD per model."""
    model: str = MAIN
    side_models: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)


# Anthropic (claude): every tier as sent, the one-hour part of a cache write apart.
#   long      2,000 x 60 = 0.12 + 20,000 x 6 = 0.12 + 600 x 75 = 0.045 + 400 x 120 = 0.048
#             + 1,200 output (1,000 + 200 reasoning) x 225 = 0.27                     = 0.603
#   delegate  300 x 30 = 0.009 + 100 x 150 = 0.015                                     = 0.024
#   subagent  (haiku) 4,000 x 10 = 0.04 + 10,000 x 1 = 0.01 + 500 x 50 = 0.025       = 0.075
#   edit      4,000 x 30 = 0.12 + 10,000 x 3 = 0.03 + 500 x 150 = 0.075                = 0.225
#   run       1,000 x 30 = 0.03 + 15,000 x 3 = 0.045 + 2,000 x 37.5 = 0.075
#             + 400 x 150 = 0.06                                                       = 0.21
#   answer    500 x 30 = 0.015 + 19,500 x 3 = 0.0585 + 200 x 150 = 0.03                = 0.1035
#   total     0.603 + 0.024 + 0.225 + 0.21 + 0.1035 = 1.1655 (sonnet) + 0.075 (haiku)  = 1.2405
CLAUDE = Case(
    turns=(CREATE, CLAUDE_DELEGATE, EDIT, RUN, ANSWER),
    model=MAIN_MODELS["claude"],
    side_models=("haiku",),
    usd=1.2405,
    by_model={"claude-sonnet-4-5": (5, 1.1655), CLAUDE_HAIKU: (1, 0.075)},
)
# OpenAI Responses (codex): cache writes are reported, but not their lifetime (5-minute rate).
#   long      0.12 + 0.12 + 1,000 x 75 = 0.075 + 0.27                                  = 0.585
#   edit 0.225 (at the pinned model), run 0.21, answer 0.1035 (as for claude)
#   total     0.585 + 0.225 + 0.21 + 0.1035                                            = 1.1235
# The edit is answered by the second model, but Codex logs the model it asked for: billed at
# the pinned one, as are opencode's (its limit, pinned here).
CODEX = Case(
    turns=(CREATE, EDIT_BY_SECOND, RUN, ANSWER),
    model=MAIN_MODELS["codex"],
    usd=1.1235,
    by_model={"gpt-5.5": (4, 1.1235)},
)
# Chat Completions and Gemini: cache writes arrive as fresh input.
#   long      3,000 x 60 = 0.18 + 20,000 x 6 = 0.12 + 1,200 x 225 = 0.27                = 0.57
#   run       3,000 x 30 = 0.09 + 15,000 x 3 = 0.045 + 400 x 150 = 0.06                 = 0.195
#   edit 0.225 (billed to the main model) or 0.075 (to the second), answer 0.1035
# gemini:     0.57 + delegate 0.024 + 0.225 + 0.195 + 0.1035 = 1.1175 (flash)
#             + the investigator's two calls on 2.5 Pro, 2 x 0.075 = 0.15: it answers without
#             calling complete_task, and Gemini CLI gives it one more turn to do so     = 1.2675
GEMINI = Case(
    turns=(CREATE, GEMINI_DELEGATE, EDIT, RUN, ANSWER),
    model=MAIN_MODELS["gemini"],
    side_models=(GEMINI_INVESTIGATOR,),
    usd=1.2675,
    by_model={"gemini-2.5-flash": (5, 1.1175), GEMINI_INVESTIGATOR: (2, 0.15)},
)
# opencode:   0.57 + delegate 0.024 + 0.225 + 0.195 + 0.1035 = 1.1175 (main)
#             + subagent 0.075 (second)                                                = 1.1925
OPENCODE = Case(
    turns=(CREATE, OPENCODE_DELEGATE, EDIT_BY_SECOND, RUN, ANSWER),
    side_models=(SECOND,),
    files={"opencode.json": json.dumps(OPENCODE_CONFIG)},
    usd=1.1925,
    by_model={MAIN: (5, 1.1175), SECOND: (1, 0.075)},
)
# pi, qwen, mini-swe-agent: 0.57 + 0.195 + 0.1035 = 0.8685 (main) + 0.075 (second)     = 0.9435
ANSWERED_BY_SECOND = Case(
    turns=(CREATE, EDIT_BY_SECOND, RUN, ANSWER),
    usd=0.9435,
    by_model={MAIN: (3, 0.8685), SECOND: (1, 0.075)},
)
# aider runs the check itself after each edit and asks again while it fails: hello.txt alone
# fails it, the edit passes it and ends the run. 0.57 (main) + 0.075 (second)           = 0.645
AIDER = Case(
    turns=(CREATE, EDIT_BY_SECOND, ANSWER),
    usd=0.645,
    by_model={MAIN: (1, 0.57), SECOND: (1, 0.075)},
    options={"edit_format": "diff", "auto_test": True, "files": "all"},
)
CASES = {
    "claude": CLAUDE,
    "codex": CODEX,
    "gemini": GEMINI,
    "opencode": OPENCODE,
    "pi": ANSWERED_BY_SECOND,
    "qwen": ANSWERED_BY_SECOND,
    "aider": AIDER,
    "mini-swe-agent": ANSWERED_BY_SECOND,
}


@pytest.mark.parametrize("harness", sorted(CASES))
def test_cost_of_a_real_cli_run_equals_the_hand_computation(harness: str, tmp_path: Path) -> None:
    case = CASES[harness]
    script = Script(turns=case.turns, side_reply=SUBAGENT_REPLY)
    task = dataclasses.replace(TASK, files={**TASK.files, **case.files})
    with ModelServer(script, side_models=case.side_models) as server:
        variant = VariantSpec(
            harness=harness,
            name=harness,
            model=case.model,
            options={
                "binary": str(cli_binary(harness)),
                "endpoint": endpoint_for(server.base_url),
                **case.options,
            },
        )
        _, records = run_trials(tmp_path, [task], [variant], price_records=PRICES, max_usd=100.0)
        problems = [r for r in server.requests if r.kind in ("error", "overrun")]
        answered = {r.reply_model for r in server.requests if r.kind in ("turn", "side")}

    assert problems == [], [(r.kind, r.error) for r in problems]
    assert len(answered) == 2  # the second model answered a call in every run
    [record] = records
    result = record.result
    assert (result.status, result.outcome) == ("completed", "pass"), (result.agent, result.note)

    cost = result.cost
    assert cost.source == "computed", cost.note
    assert cost.usd == case.usd
    assert cost.charged_usd == case.usd
    assert cost.long_context_calls == 1
    assert cost.unpriced_models == ()
    assert cost.priced_on == date.fromisoformat(result.started[:10])
    spends = {spend.model: (spend.calls, spend.usd) for spend in cost.models}
    assert spends == case.by_model
    # Each model was priced by its own record, and the result says which and from where.
    records_used = {f"{PROVIDER}/{model}@{VALID_FROM.isoformat()}" for model in case.by_model}
    assert {spend.record for spend in cost.models} == records_used
    assert {price.record for price in cost.prices} == records_used
    assert {(price.valid_from, price.valid_to, price.source) for price in cost.prices} == {
        (VALID_FROM, None, SOURCE.label)
    }
    # The per-call ledger beside it flags the one long-context call.
    ledger = json.loads((record.folder / "cost.json").read_text())
    assert [call["long_context"] for call in ledger["calls"]].count(True) == 1
