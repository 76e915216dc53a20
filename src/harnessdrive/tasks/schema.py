"""JSON Schemas of our file formats, every key described by its field's docstring.

Pydantic can read attribute docstrings itself (``use_attribute_docstrings``), but only by parsing
each model's source when the class is created, which every command would pay for at start-up.
The schema command is the only reader, so the docstrings are read here, when it asks.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, get_args

from pydantic import BaseModel


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema (by alias), with a description for every documented field."""
    schema = model.model_json_schema(by_alias=True)
    definitions = schema.get("$defs", {})
    for cls in _models_under(model):
        target = schema if cls is model else definitions.get(cls.__name__)
        if target is None:
            continue
        docs = field_docstrings(cls)
        properties = target.get("properties", {})
        for name, field in cls.model_fields.items():
            prop = properties.get(field.alias or name)
            if prop is not None and name in docs and "description" not in prop:
                prop["description"] = docs[name]
    return schema


def field_docstrings(cls: type[BaseModel]) -> dict[str, str]:
    """``{field: docstring}`` for the string literal right under each annotated field, from
    ``cls`` and its bases."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not (isinstance(klass, type) and issubclass(klass, BaseModel)) or klass is BaseModel:
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        body = ast.parse(source).body[0]
        if not isinstance(body, ast.ClassDef):
            continue
        for statement, following in zip(body.body, body.body[1:], strict=False):
            if (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                found[statement.target.id] = inspect.cleandoc(following.value.value)
    return found


def _models_under(model: type[BaseModel]) -> list[type[BaseModel]]:
    """``model`` and every model its fields hold, at any depth."""
    seen: list[type[BaseModel]] = []
    todo: list[Any] = [model]
    while todo:
        item = todo.pop()
        if isinstance(item, type) and issubclass(item, BaseModel):
            if item in seen:
                continue
            seen.append(item)
            todo.extend(field.annotation for field in item.model_fields.values())
        else:
            todo.extend(get_args(item))
    return seen
