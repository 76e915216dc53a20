"""The ATIF trajectory format (v1.4), written down as a JSON Schema from its specification, and
the rules a schema cannot say: step ids count from 1, only agent steps carry calls, metrics,
a model or an effort, and each result names a call of its own step."""

from __future__ import annotations

from typing import Any

import jsonschema

_TOKENS = {"type": "integer", "minimum": 0}
# ISO 8601 with a date, a time and a zone (the spec's timestamps are ISO 8601).
_TIMESTAMP = {
    "type": "string",
    "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$",
}
_OBJECT = {"type": "object"}

TOOL_CALL = {
    "type": "object",
    "required": ["tool_call_id", "function_name", "arguments"],
    "additionalProperties": False,
    "properties": {
        "tool_call_id": {"type": "string", "minLength": 1},
        "function_name": {"type": "string", "minLength": 1},
        "arguments": _OBJECT,
        "extra": _OBJECT,
    },
}
OBSERVATION = {
    "type": "object",
    "required": ["results"],
    "additionalProperties": False,
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "source_call_id": {"type": "string"},
                    "content": {"type": "string"},
                    "subagent_trajectory_ref": {"type": "array"},
                    "extra": _OBJECT,
                },
            },
        }
    },
}
METRICS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "prompt_tokens": _TOKENS,
        "completion_tokens": _TOKENS,
        "cached_tokens": _TOKENS,
        "cost_usd": {"type": "number", "minimum": 0},
        "prompt_token_ids": {"type": "array"},
        "completion_token_ids": {"type": "array"},
        "logprobs": {"type": "array"},
        "extra": _OBJECT,
    },
}
STEP = {
    "type": "object",
    "required": ["step_id", "source", "message"],
    "additionalProperties": False,
    "properties": {
        "step_id": {"type": "integer", "minimum": 1},
        "timestamp": _TIMESTAMP,
        "source": {"enum": ["system", "user", "agent"]},
        "model_name": {"type": "string"},
        "reasoning_effort": {"type": ["string", "number"]},
        "message": {"type": "string"},
        "reasoning_content": {"type": "string"},
        "tool_calls": {"type": "array", "items": TOOL_CALL},
        "observation": OBSERVATION,
        "metrics": METRICS,
        "extra": _OBJECT,
    },
}
TRAJECTORY = {
    "type": "object",
    "required": ["schema_version", "session_id", "agent", "steps"],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"const": "ATIF-v1.4"},
        "session_id": {"type": "string", "minLength": 1},
        "agent": {
            "type": "object",
            "required": ["name", "version"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "version": {"type": "string", "minLength": 1},
                "model_name": {"type": "string"},
                "extra": _OBJECT,
            },
        },
        "steps": {"type": "array", "minItems": 1, "items": STEP},
        "notes": {"type": "string"},
        "final_metrics": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "total_prompt_tokens": _TOKENS,
                "total_completion_tokens": _TOKENS,
                "total_cached_tokens": _TOKENS,
                "total_cost_usd": {"type": "number", "minimum": 0},
                "total_steps": _TOKENS,
                "extra": _OBJECT,
            },
        },
        "continued_trajectory_ref": {"type": "string"},
        "extra": _OBJECT,
    },
}

_AGENT_ONLY = {"tool_calls", "metrics", "model_name", "reasoning_effort", "reasoning_content"}


def atif_problems(document: dict[str, Any]) -> list[str]:
    """Everything in ``document`` that breaks the format (empty: a valid trajectory)."""
    validator = jsonschema.Draft202012Validator(TRAJECTORY)
    problems = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]
    if problems:
        return problems
    steps = document["steps"]
    if [s["step_id"] for s in steps] != list(range(1, len(steps) + 1)):
        problems.append("step ids do not count from 1")
    seen: set[str] = set()
    for step in steps:
        if step["source"] != "agent" and _AGENT_ONLY & set(step):
            problems.append(f"step {step['step_id']}: agent-only fields on a {step['source']}")
        own = {call["tool_call_id"] for call in step.get("tool_calls", [])}
        if own & seen:
            problems.append(f"step {step['step_id']}: a tool call id used twice")
        seen |= own
        for item in step.get("observation", {}).get("results", []):
            source = item.get("source_call_id")
            if source is not None and source not in own:
                problems.append(f"step {step['step_id']}: result of {source}, not a call of its")
    total = document.get("final_metrics", {}).get("total_steps")
    if total is not None and total != len(steps):
        problems.append(f"total_steps {total} but {len(steps)} steps")
    return problems
