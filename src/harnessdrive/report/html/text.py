"""Text made safe for the page: every recorded string is hostile data."""

from __future__ import annotations

import html
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean(text: object) -> str:
    """``text`` as valid Unicode without control characters: raw bytes of a file name
    (surrogate escapes) and control characters are shown as ``\\xNN``."""
    value = str(text)
    value = value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", value)


def esc(text: object) -> str:
    return html.escape(clean(text), quote=True)


def attr(text: object) -> str:
    return esc(text)
