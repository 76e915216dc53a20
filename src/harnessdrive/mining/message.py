"""A commit message as task text: its subject, and its body without its closing trailer blocks.

Trailers (``Change-Id``, ``Co-authored-by``, ``Signed-off-by``) say who and where, never what to
change: every paragraph of them at the end goes. A squash merge's message (GitHub writes its
squashed commits as bullets above a ``---------`` rule) also loses the trailer paragraphs and
"Apply suggestions from code review" bullets between its bullets: the bullets themselves say
what changed.
"""

from __future__ import annotations

import re

# `Key: value`, as in Co-Authored-By, Signed-off-by, Reviewed-by, Fixes.
_TRAILER = re.compile(r"[A-Za-z][A-Za-z0-9-]*: \S")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_RULE = re.compile(r"-{3,}")
_REVIEW_NOISE = frozenset({"Apply suggestions from code review"})


def decode_message(raw: bytes) -> str:
    """Commit messages are bytes in any encoding git did not convert: never fail on them."""
    return raw.decode("utf-8", "replace").replace("\r\n", "\n")


def split_message(message: str) -> tuple[str, str]:
    """(subject, body): the first line, and the rest without its closing trailer paragraphs."""
    subject, _, rest = message.replace("\r\n", "\n").strip().partition("\n")
    paragraphs = [p.strip("\n") for p in _PARAGRAPH_BREAK.split(rest.strip()) if p.strip()]
    if any(_RULE.fullmatch(p.strip()) for p in paragraphs):
        paragraphs = [p for p in paragraphs if not _squash_debris(p)]
    while paragraphs and (_is_trailer_block(paragraphs[-1]) or _RULE.fullmatch(paragraphs[-1])):
        paragraphs.pop()
    return subject.strip(), "\n\n".join(paragraphs).strip()


def _squash_debris(paragraph: str) -> bool:
    text = paragraph.strip()
    bullet = text.removeprefix("* ").removeprefix("- ")
    return _is_trailer_block(text) or bool(_RULE.fullmatch(text)) or bullet in _REVIEW_NOISE


def _is_trailer_block(paragraph: str) -> bool:
    lines = paragraph.splitlines()
    if not lines or not _TRAILER.match(lines[0]):
        return False
    # A line that starts with white space continues the trailer above it.
    return all(_TRAILER.match(line) or line[:1] in (" ", "\t") for line in lines)


def is_trailer(line: str) -> bool:
    """Whether ``line`` reads as a trailer (``Signed-off-by: ...``)."""
    return _TRAILER.match(line) is not None
