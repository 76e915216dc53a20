"""File names of any kind: as they live in memory, in JSON, and on a screen.

A name is bytes. In memory it is a ``str`` decoded as UTF-8 with surrogate escapes, so every name
round-trips to git and the file system (``name.encode("utf-8", "surrogateescape")``). JSON cannot
hold a lone surrogate, so there each byte that is not part of valid UTF-8 is written as NUL
followed by two lowercase hex digits (``"\\u0000ff"``): NUL can never occur in a file name, so the
form cannot be mistaken for a real one. Every other character, newlines and tabs included, is
plain JSON text. On a screen, :func:`shown` escapes what a terminal would mangle.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, PlainSerializer
from pydantic_core import PydanticSerializationError

_ESCAPED_BYTE = re.compile(r"\x00([0-9a-f]{2})")
_SURROGATE = re.compile(r"[\udc80-\udcff]")
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\\\udc80-\udcff\u2028\u2029]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\"}


def name_to_json(text: str) -> str:
    """Surrogate escapes as NUL + two hex digits (lossless; see the module doc)."""
    return _SURROGATE.sub(lambda m: f"\x00{ord(m.group()) - 0xDC00:02x}", text)


def escape_all(value: Any) -> Any:
    """Every string in a JSON-ready structure with its surrogate escapes written as names are."""
    if isinstance(value, str):
        return name_to_json(value)
    if isinstance(value, dict):
        return {escape_all(key): escape_all(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [escape_all(item) for item in value]
    return value


def model_json(model: BaseModel, *, by_alias: bool = False, indent: int | None = 2) -> str:
    """``model.model_dump_json``, except that a raw byte of a name in any text field is written
    the way names are instead of failing: a record is never lost to a name."""
    try:
        return model.model_dump_json(by_alias=by_alias, indent=indent)
    except PydanticSerializationError:
        data = escape_all(model.model_dump(mode="json", by_alias=by_alias))
        return json.dumps(data, indent=indent, ensure_ascii=False)


def name_from_json(value: object) -> object:
    if isinstance(value, str):
        return _ESCAPED_BYTE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), value)
    return value


def name_bytes(text: str) -> bytes:
    """The raw bytes of a name held in memory."""
    return text.encode("utf-8", "surrogateescape")


def shown(text: str) -> str:
    """A name for a terminal: control characters, backslashes and raw bytes as escapes."""
    return _UNPRINTABLE.sub(_escape, text)


def encodable(text: str) -> str:
    """Free text with any raw byte of a name as ``\\xNN``, so it can be printed at all."""
    return _SURROGATE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


NameText = Annotated[
    str,
    BeforeValidator(name_from_json),
    PlainSerializer(name_to_json, return_type=str, when_used="json"),
]
"""A ``str`` field that may hold file names: raw bytes survive JSON (see the module doc)."""
