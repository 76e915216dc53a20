"""A trial's transcript as an ATIF trajectory (Harbor's Agent Trajectory Interchange Format,
version ATIF-v1.4), so Harbor's viewers and tools can read it (docs/matrix.md#trajectories).

Mapping: the prompt is the first step (``user``). Each message of the agent opens an ``agent``
step; the tool calls that follow it are that step's ``tool_calls`` (an id is made up where the
CLI logged none), and each tool result is an observation result of the step that made the call,
matched by id. A command with its exit code is the result of the latest call without one that
names it (Codex logs them apart), else of the current step; a command that repeats the result
just given for its shell call adds only its exit code to that result (``extra``), so no output
appears twice. File
changes, errors, retries and notes have no ATIF field of their own: they are kept under the
step's ``extra.harnessdrive_events``. Token totals and the cost go to ``final_metrics``; ATIF's
``prompt_tokens`` counts every input token, cache reads included (``cached_tokens``).

Each model call the CLI's log placed (``ModelCall.position``: the event its answer begins at)
gives its tokens to that step's ``metrics``; an answer that begins with a tool call opens a step
of its own, and a subagent's call is billed to the step in progress. A step's ``timestamp`` is
its first event's time, else its call's; where the log has neither it has none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from harnessdrive.store.results import TrialResult
from harnessdrive.transcript.models import Event, Transcript, Usage

ATIF_VERSION = "ATIF-v1.4"
TRAJECTORY_FILE = "trajectory.json"


def trajectory(
    result: TrialResult,
    transcript: Transcript,
    prompt: str,
    call_costs: Sequence[float | None] = (),
) -> dict[str, Any]:
    """The ATIF document of one round's transcript of ``result``; ``call_costs`` (one per
    call of the transcript, when the trial was priced) gives each step its cost."""
    steps: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": prompt}]
    step_of_call: dict[str, dict[str, Any]] = {}
    input_of_call: dict[str, str] = {}
    pending: list[str] = []
    """Calls without a result yet, in order: a command with no id of its own is the result of
    the latest one that names it (Codex logs a command's outcome apart from its call)."""
    last_result: dict[str, Any] | None = None
    """The result the previous event gave, when it did: a command right after the result of
    the shell call that ran it repeats that output (Claude Code, pi, ...), so it is folded in."""
    current: dict[str, Any] | None = None
    made_up = 0
    # Per-step costs only where the trial's own figure is the sum of its calls' prices.
    priced = result.cost.source == "computed" and len(call_costs) == len(transcript.calls)
    costs = list(call_costs) if priced else []
    events = transcript.events
    arriving: dict[int, list[int]] = {}
    """Model calls (by index) by the event their answer begins at."""
    for index, call in enumerate(transcript.calls):
        if call.position is not None:
            arriving.setdefault(min(max(call.position, 0), len(events)), []).append(index)
    calls_of_step: dict[int, list[int]] = {}

    def agent_step(message: str, time: str | None = None) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": len(steps) + 1, "source": "agent", "message": message}
        if time is not None:
            step["timestamp"] = time
        model = transcript.model or result.variant.model
        if model:
            step["model_name"] = model
        if result.variant.effort:
            step["reasoning_effort"] = result.variant.effort
        steps.append(step)
        return step

    def answered_here(step: dict[str, Any]) -> bool:
        """Whether a call of the main agent is already this step's."""
        made = calls_of_step.get(step["step_id"], [])
        return any(transcript.calls[i].agent is None for i in made)

    def attach(step: dict[str, Any], made: list[int]) -> None:
        calls_of_step.setdefault(step["step_id"], []).extend(made)
        if "timestamp" not in step:
            times = [transcript.calls[i].time for i in made if transcript.calls[i].agent is None]
            if times and times[0] is not None:
                step["timestamp"] = times[0]

    for position, event in enumerate(events):
        previous_result, last_result = last_result, None
        made = arriving.get(position, [])
        # A step per answer of the model: its message opens one, and so does an answer that
        # begins with a tool call (a subagent's calls are billed to the step that ran it).
        opens = any(transcript.calls[i].agent is None for i in made)
        if event.kind == "message":
            current = agent_step(event.text, event.time)
            attach(current, made)
            continue
        if current is None or (opens and answered_here(current)):
            current = agent_step("", event.time)
        attach(current, made)
        if event.kind == "tool_call":
            call_id = str(event.data.get("id") or "")
            if not call_id or call_id in step_of_call:
                made_up += 1
                call_id = f"harnessdrive-call-{made_up}"
            arguments = event.data.get("input")
            current.setdefault("tool_calls", []).append(
                {
                    "tool_call_id": call_id,
                    "function_name": event.text or "tool",
                    "arguments": arguments if isinstance(arguments, dict) else _wrapped(arguments),
                }
            )
            step_of_call[call_id] = current
            input_of_call[call_id] = "\n".join(_strings(arguments))
            pending.append(call_id)
        elif event.kind == "tool_result":
            call_id = str(event.data.get("id") or "")
            owner = step_of_call.get(call_id, current)
            item: dict[str, Any] = {"content": _text(event.data.get("output", event.text))}
            if call_id in step_of_call:
                item["source_call_id"] = call_id
                if call_id in pending:
                    pending.remove(call_id)
            owner.setdefault("observation", {"results": []})["results"].append(item)
            last_result = item
        elif event.kind == "command":
            code = event.data.get("exit_code")
            shown_code = code if code is not None else "unknown"
            ran = previous_result.get("source_call_id") if previous_result else None
            if previous_result is not None and ran and event.text in input_of_call.get(ran, ""):
                previous_result.setdefault("extra", {}).update(
                    {"command": event.text, "exit_code": code}
                )
                continue
            output = _text(event.data.get("output", ""))
            content = f"$ {event.text}\n[exit code {shown_code}]"
            result_item: dict[str, Any] = {"content": f"{content}\n{output}" if output else content}
            owner = current
            caller = next(
                (c for c in reversed(pending) if event.text and event.text in input_of_call[c]),
                None,
            )
            if caller is not None:
                pending.remove(caller)
                result_item["source_call_id"] = caller
                owner = step_of_call[caller]
            owner.setdefault("observation", {"results": []})["results"].append(result_item)
        else:
            extra = current.setdefault("extra", {})
            extra.setdefault("harnessdrive_events", []).append(_event(event))
    late = arriving.get(len(events), [])
    if transcript.final_message and transcript.final_message != _last_message(steps):
        attach(agent_step(transcript.final_message), late)
    elif late:
        # Answers after the last event (a call that produced nothing the log kept).
        last = steps[-1] if steps[-1]["source"] == "agent" else None
        attach(agent_step("") if last is None or answered_here(last) else last, late)
    for step in steps:
        if calls_of_step.get(step["step_id"]):
            step["metrics"] = _metrics(transcript, calls_of_step[step["step_id"]], costs)
    usage = transcript.usage
    document: dict[str, Any] = {
        "schema_version": ATIF_VERSION,
        "session_id": transcript.session_id or result.trial_id,
        "agent": {
            "name": result.harness,
            "version": result.harness_version or "unknown",
            **({"model_name": m} if (m := transcript.model or result.variant.model) else {}),
            "extra": {
                "variant": result.variant_label,
                "effort": result.variant.effort,
                "treatment": result.variant.treatment.name if result.variant.treatment else None,
            },
        },
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": usage.prompt_tokens,
            "total_completion_tokens": usage.output,
            "total_cached_tokens": usage.cache_read,
            **({"total_cost_usd": result.cost.usd} if result.cost.usd is not None else {}),
            "total_steps": len(steps),
            "extra": {
                "cache_write_tokens": usage.cache_write,
                "reasoning_tokens": usage.reasoning,
                "model_calls": len(transcript.calls),
                # Calls the CLI's log could not place in its run: in no step's metrics.
                "model_calls_without_step": len(transcript.calls)
                - sum(len(made) for made in calls_of_step.values()),
            },
        },
        "notes": "Exported by harnessdrive from transcript.json; tool calls without an id in "
        "the CLI's log were given one (harnessdrive-call-N).",
        "extra": {
            "trial_id": result.trial_id,
            "task": result.task,
            "status": result.status,
            "outcome": result.outcome,
            "harnessdrive_version": result.harnessdrive_version,
        },
    }
    return document


def trajectory_json(
    result: TrialResult,
    transcript: Transcript,
    prompt: str,
    call_costs: Sequence[float | None] = (),
) -> str:
    return json.dumps(trajectory(result, transcript, prompt, call_costs), indent=2) + "\n"


def _metrics(transcript: Transcript, made: list[int], costs: list[float | None]) -> dict[str, Any]:
    """The tokens of the calls that answered in one step (ATIF's ``prompt_tokens`` counts
    cache reads and writes too), and their cost when every one of them was priced."""
    usage = Usage()
    for index in made:
        usage = usage + transcript.calls[index].usage
    metrics: dict[str, Any] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.output,
        "cached_tokens": usage.cache_read,
    }
    priced = [costs[index] for index in made] if costs else []
    if priced and all(cost is not None for cost in priced):
        metrics["cost_usd"] = round(sum(cost for cost in priced if cost is not None), 10)
    metrics["extra"] = {
        "cache_creation_tokens": usage.cache_write,
        "reasoning_tokens": usage.reasoning,
        "model_calls": len(made),
    }
    subagents = sorted({a for i in made if (a := transcript.calls[i].agent) is not None})
    if subagents:
        metrics["extra"]["subagents"] = subagents
    return metrics


def _strings(value: object) -> list[str]:
    """Every string inside a call's arguments, unescaped, to find a command's text in; an
    argument that is itself JSON (a Chat Completions call) is read as such."""
    if isinstance(value, str):
        if value.lstrip().startswith(("{", "[")):
            try:
                return [value, *_strings(json.loads(value))]
            except ValueError:
                return [value]
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _wrapped(arguments: object) -> dict[str, Any]:
    # ATIF wants an object; a CLI may log a plain string (a shell command) or nothing.
    return {} if arguments is None else {"input": arguments}


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _event(event: Event) -> dict[str, Any]:
    return {"kind": event.kind, "text": event.text, **({"data": event.data} if event.data else {})}


def _last_message(steps: list[dict[str, Any]]) -> str | None:
    agent = [s for s in steps if s["source"] == "agent"]
    return agent[-1]["message"] if agent else None
