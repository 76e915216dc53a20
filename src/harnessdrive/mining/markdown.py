"""Untrusted text (commit subjects, file names, commands) made safe for a markdown summary.

Such text is shown as one line of inline code: it cannot start a heading, a link, an image or a
new table cell, and common secrets in it are masked.
"""

from __future__ import annotations

import re

_SECRETS = (
    re.compile(r"(?<=://)([^/\s:@]+):([^/\s@]+)(?=@)"),  # user:password@ in a URL
    re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{12,}"),
    re.compile(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}"
        r"|sk-[A-Za-z0-9_-]{20,}|sk_live_[A-Za-z0-9]{16,}|xox[abpr]-[A-Za-z0-9-]{10,}"
        r"|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,}|AKIA[0-9A-Z]{16})\b"
    ),
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
REDACTED = "[REDACTED]"


def _mask(text: str) -> str:
    url, bearer, token = _SECRETS
    text = url.sub(lambda m: f"{m.group(1)}:{REDACTED}", text)
    text = bearer.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return token.sub(REDACTED, text)


def safe_text(text: str, limit: int = 200) -> str:
    """One line, no backticks or pipes, secrets masked, at most ``limit`` characters."""
    text = _SURROGATE.sub("\ufffd", text)
    text = _CONTROL.sub(" ", text)
    text = " ".join(_mask(text).split())
    text = text.replace("`", "'").replace("|", "/")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def code(text: str, limit: int = 200) -> str:
    """``text`` as inline code that cannot break out of its span or its table cell."""
    return f"`{safe_text(text, limit) or '(empty)'}`"
