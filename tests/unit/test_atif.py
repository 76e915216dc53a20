"""A transcript as an ATIF-v1.4 trajectory: the spec's rules hold for every shape of events."""

from __future__ import annotations

from typing import Any

from harnessdrive.export.atif import ATIF_VERSION, trajectory
from harnessdrive.store.results import Cost
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Event, ModelCall, Transcript, Usage
from tests.atif_schema import atif_problems
from tests.trial_results import trial_result

EVENTS = (
    Event(kind="tool_call", text="Read", data={"input": {"path": "a.py"}, "id": "t0"}),
    Event(kind="tool_result", text="Read", data={"output": "x = 1", "id": "t0"}),
    Event(kind="message", text="Editing a.py."),
    Event(kind="tool_call", text="Edit", data={"input": {"old": "1", "new": "2"}, "id": "t1"}),
    Event(kind="file_change", text="a.py"),
    Event(kind="tool_call", text="Bash", data={"input": "pytest -q"}),  # no id, not an object
    Event(kind="message", text="Running the tests."),
    Event(kind="tool_result", text="Edit", data={"output": "ok", "id": "t1"}),  # late result
    Event(kind="command", text="pytest -q", data={"exit_code": 1, "output": "1 failed"}),
    Event(kind="error", text="rate limited"),
)
USAGE = Usage(input=100, cache_read=40, cache_write=10, output=30, reasoning=5)


def document(events: tuple[Event, ...] = EVENTS, **transcript: Any) -> dict[str, Any]:
    result = trial_result(
        "t",
        "codex",
        status="completed",
        outcome="fail",
        harness_version="0.9.1",
        cost=Cost(usd=0.25, source="computed"),
    ).model_copy(update={"variant": VariantSpec(harness="codex", model="gpt-5.5", effort="high")})
    made = Transcript(
        events=events,
        calls=(ModelCall(model="gpt-5.5", usage=USAGE), ModelCall(model="gpt-5.5", usage=USAGE)),
        model="gpt-5.5",
        session_id="s-1",
        final_message="All done.",
        **transcript,
    )
    return trajectory(result, made, "Fix a.py.")


def test_the_document_follows_the_atif_rules() -> None:
    doc = document()
    assert doc["schema_version"] == ATIF_VERSION == "ATIF-v1.4"
    assert doc["session_id"] == "s-1"
    assert doc["agent"]["name"] == "codex" and doc["agent"]["version"] == "0.9.1"
    steps = doc["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    assert steps[0] == {"step_id": 1, "source": "user", "message": "Fix a.py."}
    for step in steps:
        assert isinstance(step["message"], str)
        if step["source"] != "agent":
            assert not {"tool_calls", "metrics", "model_name", "reasoning_effort"} & set(step)
        own = {call["tool_call_id"] for call in step.get("tool_calls", [])}
        for item in step.get("observation", {}).get("results", []):
            assert item.get("source_call_id") in own | {None}
        for call in step.get("tool_calls", []):
            assert isinstance(call["arguments"], dict)
    ids = [c["tool_call_id"] for s in steps for c in s.get("tool_calls", [])]
    assert len(ids) == len(set(ids)) == 3


def test_the_document_is_a_valid_trajectory_and_the_schema_can_fail() -> None:
    doc = document()
    assert atif_problems(doc) == []
    broken = {**doc, "steps": [{**doc["steps"][1], "source": "user"}, *doc["steps"][2:]]}
    assert any("step ids" in p for p in atif_problems(broken))
    assert any("agent-only" in p for p in atif_problems(broken))
    assert atif_problems({**doc, "schema_version": "ATIF-v9"})


def test_each_event_lands_where_a_reader_looks_for_it() -> None:
    steps = document()["steps"]
    first, editing, running, done = steps[1:]
    assert first["message"] == "" and first["tool_calls"][0]["function_name"] == "Read"
    assert first["observation"]["results"] == [{"content": "x = 1", "source_call_id": "t0"}]
    assert [c["function_name"] for c in editing["tool_calls"]] == ["Edit", "Bash"]
    assert editing["tool_calls"][1]["arguments"] == {"input": "pytest -q"}
    # The late result goes to the step that made the call.
    assert {"content": "ok", "source_call_id": "t1"} in editing["observation"]["results"]
    assert editing["extra"]["harnessdrive_events"] == [{"kind": "file_change", "text": "a.py"}]
    # The command is the result of the Bash call that named it, logged apart (as Codex does).
    assert {
        "content": "$ pytest -q\n[exit code 1]\n1 failed",
        "source_call_id": "harnessdrive-call-1",
    } in editing["observation"]["results"]
    assert "observation" not in running
    assert running["extra"]["harnessdrive_events"][0]["kind"] == "error"
    assert running["reasoning_effort"] == "high" and running["model_name"] == "gpt-5.5"
    assert done["message"] == "All done."


def test_final_metrics_count_every_input_token_and_the_cost() -> None:
    metrics = document()["final_metrics"]
    assert metrics["total_prompt_tokens"] == 2 * (100 + 40 + 10)
    assert metrics["total_cached_tokens"] == 80
    assert metrics["total_completion_tokens"] == 60
    assert metrics["total_cost_usd"] == 0.25
    assert metrics["total_steps"] == 5


def test_a_command_after_its_shell_result_adds_its_exit_code_and_no_second_output() -> None:
    events = (
        Event(kind="tool_call", text="Bash", data={"input": {"command": "pytest -q"}, "id": "b"}),
        Event(kind="tool_result", text="Bash", data={"output": "3 passed", "id": "b"}),
        Event(kind="command", text="pytest -q", data={"exit_code": 0, "output": "3 passed"}),
        Event(kind="tool_call", text="Read", data={"input": {"file_path": "x"}, "id": "r"}),
        Event(kind="tool_result", text="Read", data={"output": "x = 1", "id": "r"}),
        Event(kind="command", text="make", data={"exit_code": 2, "output": "no rule"}),
    )
    doc = document(events=events)
    [step] = [s for s in doc["steps"] if s.get("tool_calls")]
    results = step["observation"]["results"]
    assert results[0] == {
        "content": "3 passed",
        "source_call_id": "b",
        "extra": {"command": "pytest -q", "exit_code": 0},
    }
    assert sum("3 passed" in r["content"] for r in results) == 1
    # A command no call names stays a result of its own.
    assert results[2] == {"content": "$ make\n[exit code 2]\nno rule"}
