"""Each step of an ATIF trajectory carries the time the CLI logged and the tokens (and cost) of
the model calls that answered there; what a log cannot say is left out, never made up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.accounting.ledger import ledger_costs
from harnessdrive.export.atif import trajectory
from harnessdrive.harnesses.cli.recording import TranscriptBuilder, logged_time, position_at
from harnessdrive.harnesses.codex_rollout import StreamItem, change_diff, place_calls
from harnessdrive.store.results import Cost
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Event, ModelCall, Transcript, Usage
from tests.atif_schema import atif_problems
from tests.trial_results import trial_result

T0, T1, T2, T3, T4 = (f"2026-01-01T00:00:0{n}.000Z" for n in range(5))
EVENTS = (
    Event(kind="message", text="Reading.", time=T0),
    Event(kind="tool_call", text="Read", data={"input": {"path": "a"}, "id": "r"}, time=T0),
    Event(kind="tool_result", text="Read", data={"output": "x", "id": "r"}, time=T1),
    # An answer that is only a tool call: a step of its own.
    Event(kind="tool_call", text="Task", data={"input": {"goal": "g"}, "id": "t"}, time=T2),
    Event(kind="tool_result", text="Task", data={"output": "done", "id": "t"}, time=T3),
)


def call(
    output: int, position: int | None, time: str | None, agent: str | None = None
) -> ModelCall:
    usage = Usage(input=10 * output, cache_read=output, cache_write=2, output=output, reasoning=1)
    return ModelCall(model="m", usage=usage, agent=agent, time=time, position=position)


CALLS = (
    call(1, 0, T0),
    call(2, 3, T2),
    call(4, 4, T2, agent="explorer"),  # the subagent the Task call ran
    call(8, 5, T4),  # the last answer: only the final message, kept apart
)


def document(
    calls: tuple[ModelCall, ...] = CALLS, source: str = "computed", **kw: Any
) -> dict[str, Any]:
    result = trial_result("t", "claude", status="completed", outcome="pass", harness_version="2")
    result = result.model_copy(
        update={
            "variant": VariantSpec(harness="claude", model="m"),
            "cost": Cost(usd=1.5, source=source),  # type: ignore[arg-type]
        }
    )
    made = Transcript(events=kw.pop("events", EVENTS), calls=calls, final_message="Finished.")
    return trajectory(result, made, "Do it.", **kw)


def test_each_answer_is_a_step_with_its_time_and_its_calls_tokens() -> None:
    doc = document()
    assert atif_problems(doc) == []
    user, reading, tasking, finished = doc["steps"]
    assert "timestamp" not in user and "metrics" not in user
    assert (reading["timestamp"], tasking["timestamp"], finished["timestamp"]) == (T0, T2, T4)
    assert reading["metrics"] == {
        "prompt_tokens": 10 + 1 + 2,
        "completion_tokens": 1,
        "cached_tokens": 1,
        "extra": {"cache_creation_tokens": 2, "reasoning_tokens": 1, "model_calls": 1},
    }
    # The subagent's call is billed to the step whose Task call ran it; it opens no step.
    assert tasking["message"] == "" and tasking["tool_calls"][0]["function_name"] == "Task"
    assert tasking["metrics"]["completion_tokens"] == 2 + 4
    assert tasking["metrics"]["extra"]["model_calls"] == 2
    assert tasking["metrics"]["extra"]["subagents"] == ["explorer"]
    assert finished["message"] == "Finished." and finished["metrics"]["completion_tokens"] == 8
    final = doc["final_metrics"]
    steps = [s["metrics"] for s in doc["steps"] if "metrics" in s]
    assert sum(m["prompt_tokens"] for m in steps) == final["total_prompt_tokens"]
    assert sum(m["completion_tokens"] for m in steps) == final["total_completion_tokens"] == 15
    assert sum(m["cached_tokens"] for m in steps) == final["total_cached_tokens"]
    assert final["extra"]["model_calls_without_step"] == 0


def test_a_log_without_times_or_places_gives_steps_neither() -> None:
    events = tuple(event.model_copy(update={"time": None}) for event in EVENTS)
    calls = tuple(c.model_copy(update={"time": None, "position": None}) for c in CALLS)
    doc = document(calls, events=events)
    assert atif_problems(doc) == []
    assert not any("timestamp" in s or "metrics" in s for s in doc["steps"])
    assert doc["final_metrics"]["extra"]["model_calls_without_step"] == 4
    assert doc["final_metrics"]["total_completion_tokens"] == 15


def test_a_second_answer_at_one_step_opens_a_step_of_its_own() -> None:
    events = (Event(kind="tool_call", text="Bash", data={"id": "a"}, time=T1),)
    doc = document((call(1, 0, T0), call(2, 1, T3)), events=events)
    steps = doc["steps"][1:]
    assert [s.get("timestamp") for s in steps] == [T1, T3]
    assert [s["metrics"]["completion_tokens"] for s in steps] == [1, 2]


def test_steps_are_priced_only_when_the_trial_is_the_sum_of_its_calls_prices() -> None:
    priced = document(call_costs=(0.25, 0.5, 0.25, 0.5))
    costs = [s["metrics"].get("cost_usd") for s in priced["steps"] if "metrics" in s]
    assert costs == [0.25, 0.75, 0.5]
    assert sum(costs) == priced["final_metrics"]["total_cost_usd"]
    reported = document(source="reported", call_costs=(0.25, 0.5, 0.25, 0.5))
    assert not any("cost_usd" in s.get("metrics", {}) for s in reported["steps"])
    # An unpriced call leaves its step without a cost rather than a partial one.
    partial = document(call_costs=(0.25, None, 0.25, 0.5))
    assert [s["metrics"].get("cost_usd") for s in partial["steps"] if "metrics" in s] == [
        0.25,
        None,
        0.5,
    ]


def test_the_schema_refuses_a_timestamp_that_is_not_iso_8601() -> None:
    doc = document()
    doc["steps"][1]["timestamp"] = "yesterday"
    assert atif_problems(doc)


@pytest.mark.parametrize(
    ("value", "epoch", "expected"),
    [
        ("2026-01-01T10:00:00.5Z", None, "2026-01-01T10:00:00.500Z"),
        ("2026-01-01T12:00:00+02:00", None, "2026-01-01T10:00:00.000Z"),
        ("2026-01-01T10:00:00", None, None),  # no zone: not a time we may guess
        (1767261600000, "ms", "2026-01-01T10:00:00.000Z"),
        (1767261600.25, "s", "2026-01-01T10:00:00.250Z"),
        (1767261600, None, None),  # a number whose unit the log does not say
        ("soon", None, None),
        (None, "s", None),
        (True, "s", None),
    ],
)
def test_logged_times_are_read_only_when_they_are_times(
    value: object, epoch: Any, expected: str | None
) -> None:
    assert logged_time(value, epoch=epoch) == expected


def test_a_call_logged_apart_falls_before_the_first_event_logged_after_it() -> None:
    assert position_at(EVENTS, T1) == 3
    assert position_at(EVENTS, T4) == len(EVENTS)
    assert position_at(EVENTS, None) is None


def test_the_ledger_prices_each_round_in_turn(tmp_path: Path) -> None:
    ledger = tmp_path / "cost.json"
    calls = [{"index": i, "model": "m", "provider": None, "record_id": "r"} for i in range(3)]
    cost = {"input": "0.5", "cache_read": "0", "cache_write_5m": "0", "cache_write_1h": "0"}
    calls[1]["cost"] = {**cost, "output": "0.25"}
    pricing = {"on": "2026-01-01", "calls": calls, "by_tier": {}, "priced_total": "0.75"}
    ledger.write_text(json.dumps({**pricing, "records": []}))
    assert ledger_costs(ledger, [1, 2]) == [(None,), (0.75, None)]
    assert ledger_costs(ledger, [2]) == [()]  # does not add up: no prices
    assert ledger_costs(tmp_path / "missing.json", [1]) == [()]


def test_codex_changes_become_diffs() -> None:
    assert change_diff({"type": "add", "content": "a\nb\n"}) == "@@ -0,0 +1,2 @@\n+a\n+b\n"
    assert change_diff({"type": "delete", "content": "a\n"}) == "@@ -1,1 +0,0 @@\n-a\n"
    update = {"type": "update", "unified_diff": "@@ -1 +1 @@\n-x\n+y\n", "move_path": "b.py"}
    assert change_diff(update) == "renamed to b.py\n@@ -1 +1 @@\n-x\n+y\n"
    assert change_diff({"type": "add"}) == ""


def _rollout(kinds: list[str]) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [
        {"type": "response_item", "payload": {"type": "message", "role": "assistant", "id": "m0"}},
        {"type": "response_item", "payload": {"type": "custom_tool_call", "call_id": "c0"}},
        {"type": "token_usage_record", "timestamp": T1, "payload": {}},
    ]
    for kind, item_id, time in zip(kinds, ["m0", "c0"], [T0, T2], strict=False):
        item = {
            "type": kind,
            "id": item_id,
            "changes": {"/w/a.py": {"type": "add", "content": "x\n"}},
        }
        lines.insert(
            -1 if item_id == "m0" else len(lines),
            {
                "type": "event_msg",
                "timestamp": time,
                "payload": {"type": "item_completed", "item": item},
            },
        )
    return lines


def _codex_builder() -> tuple[TranscriptBuilder, list[StreamItem]]:
    builder = TranscriptBuilder(Path("/w"))
    builder.message("Adding a.py.")
    builder.tool_call("apply_patch", [{"path": "/w/a.py", "kind": "add"}], "item_1")
    builder.file_change("/w/a.py", "add")
    builder.call("gpt", Usage(output=1), None)
    return builder, [StreamItem("agent_message", 0, 1), StreamItem("file_change", 1, 3)]


def test_codex_rollout_times_places_and_patches_the_stream() -> None:
    builder, items = _codex_builder()
    place_calls(_rollout(["AgentMessage", "FileChange"]), items, builder)
    assert [e.time for e in builder.events] == [T0, T2, T2]
    assert (builder.calls[0].position, builder.calls[0].time) == (0, T1)
    assert builder.events[2].data["diff"] == "@@ -0,0 +1,1 @@\n+x\n"
    assert builder.events[1].data["input"][0]["diff"] == "@@ -0,0 +1,1 @@\n+x\n"


def test_codex_items_that_do_not_line_up_place_and_time_nothing() -> None:
    builder, items = _codex_builder()
    place_calls(_rollout(["AgentMessage", "CommandExecution"]), items, builder)
    assert [e.time for e in builder.events] == [None, None, None]
    assert builder.calls[0].position is None and "diff" not in builder.events[2].data
