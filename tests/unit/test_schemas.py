"""The published JSON Schemas describe every key, from the models' own field docs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harnessdrive.cli.app import run_cli


def undescribed(schema: dict[str, Any]) -> list[str]:
    """Keys with no description of their own or of the table they refer to."""
    defs = schema.get("$defs", {})
    missing = []
    for name, definition in {"top": schema, **defs}.items():
        for key, prop in definition.get("properties", {}).items():
            target = defs.get(prop.get("$ref", "").rpartition("/")[2], {})
            if not (prop.get("description") or target.get("description")):
                missing.append(f"{name}.{key}")
    return missing


@pytest.mark.parametrize("kind", ["task", "suite"])
def test_every_key_of_the_task_and_suite_files_has_a_description(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["schema", kind]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert undescribed(schema) == []


def test_field_docs_reach_the_result_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["schema", "result"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert "hash of its folder" in schema["properties"]["suite_id"]["description"]
    assert "own machinery" in schema["$defs"]["Timing"]["properties"]["overhead"]["description"]
