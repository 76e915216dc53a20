"""The harnesses' options models in the JSON Schema of the variant tables.

A variant's ``options`` depend on its ``harness``, so the ``VariantSpec`` definition gets one
``if harness == NAME then options is NAME's model`` branch per registered harness (JSON Schema's
``if``/``then``, understood by editors that read schemas). Each model's schema is kept under
``$defs`` as ``<harness>.options``; the tables it refers to are shared when two models use the
same one, and namespaced by harness when names collide.
"""

from __future__ import annotations

import json
from typing import Any

from harnessdrive.harnesses.registry import available
from harnessdrive.tasks.schema import json_schema

VARIANT_DEFINITION = "VariantSpec"


def with_harness_options(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each registered harness's options model under its variant tables."""
    definitions: dict[str, Any] = schema.get("$defs", {})
    variant = definitions.get(VARIANT_DEFINITION)
    if variant is None:
        return schema
    branches = []
    for name, entry in available().items():
        options = json_schema(entry.options)
        renamed: dict[str, str] = {}
        for key, table in options.pop("$defs", {}).items():
            target = key if definitions.get(key, table) == table else f"{name}.{key}"
            definitions[target] = table
            renamed[key] = target
        key = f"{name}.options"
        definitions[key] = _rename_refs(options, renamed)
        branches.append(
            {
                "if": {"properties": {"harness": {"const": name}}, "required": ["harness"]},
                "then": {"properties": {"options": {"$ref": f"#/$defs/{key}"}}},
            }
        )
    variant["allOf"] = branches
    schema["$defs"] = definitions
    return schema


def _rename_refs(schema: dict[str, Any], renamed: dict[str, str]) -> dict[str, Any]:
    text = json.dumps(schema)
    for old, new in renamed.items():
        if old != new:
            text = text.replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
    result: dict[str, Any] = json.loads(text)
    return result
