"""Readers of data the agent can influence, bounded in size and depth.

Settings files in the change, test reports, the differential worker's answers, requests to a
served oracle: the agent wrote them or ran the code that did. Every reader here refuses what is
over a bound before it parses, and turns whatever the parser raises (a syntax error, a declared
encoding nobody supports, an integer too long to convert, nesting that would exhaust the stack)
into one :class:`AgentDataError`. The callers map that error to the agent's outcome (``fail``,
or ``tampered`` with a finding), never to "not counted" (grading/taxonomy.py).
"""

from __future__ import annotations

import configparser
import hashlib
import itertools
import json
import re
import tomllib
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError
from xml.parsers.expat import ExpatError

from harnessdrive.errors import AgentDataError

MAX_DEPTH = 64
"""Nesting (arrays, objects, tables, elements) no honest settings file or report comes near."""
ANSWER_DEPTH = 200
"""Nesting of a differential candidate's answer: deeper fails its case, never the grader."""
MAX_SETTINGS_BYTES = 4 * 1024 * 1024
"""A settings file (pyproject.toml, package.json, setup.cfg) of the change, read whole."""
EXCERPT_CHARS = 2000
"""How much of an agent-made value is kept where the whole would be unbounded."""

AGENT_DATA_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,  # syntax, JSON and TOML decode errors, an integer over the conversion limit
    LookupError,  # a declared encoding Python does not know, a missing key
    TypeError,  # a value of the wrong type where a structure was expected
    AttributeError,
    OverflowError,  # a float infinity converted to an integer
    RecursionError,  # nesting past the interpreter's stack
    ParseError,  # XML, as ElementTree reports it
    ExpatError,  # XML, as the parser itself does
    configparser.Error,
)
"""What a parser of agent-made data may raise because of the data: each is the agent's doing."""
REFUSED: tuple[type[BaseException], ...] = (AgentDataError, *AGENT_DATA_ERRORS)
"""What code that reads agent-made data with these readers and a few conversions of its own
(``int()`` of a field, a key looked up) catches as the data's fault."""
UNREADABLE: tuple[type[BaseException], ...] = (OSError, *REFUSED)
"""The same, and a file that cannot be opened or read."""

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_TOML_STRING = re.compile(rb"\"\"\".*?\"\"\"|'''.*?'''|\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|#[^\n]*")
_NOT_BRACKET = bytes(set(range(256)) - set(b"[]{}"))
_OPENING = frozenset(b"[{")


def nesting_depth(data: bytes, strings: re.Pattern[bytes] | None = _JSON_STRING) -> int:
    """The deepest bracket nesting of ``data`` (``[`` and ``{``), strings matched by ``strings``
    left out; an upper bound where the pattern misses a string, never an underestimate."""
    if strings is not None:
        data = strings.sub(b"", data)
    brackets = data.translate(None, _NOT_BRACKET)
    steps = (1 if byte in _OPENING else -1 for byte in brackets)
    return max(itertools.accumulate(steps, initial=0))


def checked_size(data: bytes, what: str, limit: int) -> bytes:
    if len(data) > limit:
        raise AgentDataError(f"{what} is over {limit} bytes ({len(data)})")
    return data


def load_json(
    data: bytes | str, what: str, *, max_bytes: int = MAX_SETTINGS_BYTES, depth: int = MAX_DEPTH
) -> Any:
    """``data`` parsed as JSON, or :class:`AgentDataError`."""
    raw = checked_size(
        data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data, what, max_bytes
    )
    if nesting_depth(raw) > depth:
        raise AgentDataError(f"{what} nests deeper than {depth} levels")
    try:
        return json.loads(raw)
    except AGENT_DATA_ERRORS as exc:
        raise AgentDataError(f"{what} is not valid JSON: {_brief(exc)}") from None


def load_toml(
    data: bytes, what: str, *, max_bytes: int = MAX_SETTINGS_BYTES, depth: int = MAX_DEPTH
) -> dict[str, Any]:
    """``data`` parsed as TOML (UTF-8, undecodable bytes replaced), or :class:`AgentDataError`."""
    checked_size(data, what, max_bytes)
    if nesting_depth(data, _TOML_STRING) > depth:
        raise AgentDataError(f"{what} nests deeper than {depth} levels")
    try:
        return tomllib.loads(data.decode("utf-8", errors="replace"))
    except AGENT_DATA_ERRORS as exc:
        raise AgentDataError(f"{what} is not valid TOML: {_brief(exc)}") from None


def load_ini(data: bytes, what: str, *, max_bytes: int = MAX_SETTINGS_BYTES) -> Any:
    """``data`` parsed as an INI file (setup.cfg, tox.ini), or :class:`AgentDataError`."""
    checked_size(data, what, max_bytes)
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(data.decode("utf-8", errors="replace"))
    except AGENT_DATA_ERRORS as exc:
        raise AgentDataError(f"{what} is not a valid settings file: {_brief(exc)}") from None
    return parser


def read_bounded(path: Path, what: str, limit: int) -> bytes:
    """The content of the regular file ``path`` (no link followed), refused over ``limit``."""
    if path.is_symlink() or not path.is_file():
        raise AgentDataError(f"{what} is not a regular file")
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise AgentDataError(f"{what} cannot be read: {exc.strerror}") from None
    return checked_size(data, what, limit)


def digest(data: bytes | str) -> str:
    """``sha256:`` and the hex digest of ``data`` (text as UTF-8)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` whole, or its head and tail around a note of how much was left out."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} ...[{len(text) - 2 * half} characters left out]... {text[-half:]}"


def _brief(exc: BaseException) -> str:
    return excerpt(f"{type(exc).__name__}: {exc}", 300)
