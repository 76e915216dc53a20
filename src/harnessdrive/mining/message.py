"""A commit message as task text: its subject, and its body without a closing trailer block."""

from __future__ import annotations

import re

# `Key: value`, as in Co-Authored-By, Signed-off-by, Reviewed-by, Fixes.
_TRAILER = re.compile(r"[A-Za-z][A-Za-z0-9-]*: \S")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def decode_message(raw: bytes) -> str:
    """Commit messages are bytes in any encoding git did not convert: never fail on them."""
    return raw.decode("utf-8", "replace").replace("\r\n", "\n")


def split_message(message: str) -> tuple[str, str]:
    """(subject, body): the first line, and the rest without a last paragraph of trailers."""
    subject, _, rest = message.replace("\r\n", "\n").strip().partition("\n")
    paragraphs = [p.strip("\n") for p in _PARAGRAPH_BREAK.split(rest.strip()) if p.strip()]
    if paragraphs and _is_trailer_block(paragraphs[-1]):
        paragraphs.pop()
    return subject.strip(), "\n\n".join(paragraphs).strip()


def _is_trailer_block(paragraph: str) -> bool:
    lines = paragraph.splitlines()
    if not lines or not _TRAILER.match(lines[0]):
        return False
    # A line that starts with white space continues the trailer above it.
    return all(_TRAILER.match(line) or line[:1] in (" ", "\t") for line in lines)
