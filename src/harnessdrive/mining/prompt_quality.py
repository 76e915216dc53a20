"""Whether a mined task's prompt gives an agent a fair chance: read from the message and diff.

A commit message is written for reviewers who can see the diff, not for someone who must write
the change from the message alone. Two things make a task unfair to grade:

- the prompt says too little: empty (``fix``), only trailers, a merge's boilerplate ("Merge
  commit from fork"), a list of squashed bullets over a large change, mostly a link the agent
  cannot open (a chat session, an issue), or a few words over hundreds of changed lines;
- the hidden tests pin what the prompt never states: an exception type, an exact message, a
  private name the fix introduces, a new default. Found by reading the tests' added lines and
  the gold patch, never by running anything.

Each task gets the record; a task whose prompt has a problem, or whose tests demand an exact
message the prompt does not give, is weak: mining sets it aside unless ``--keep-weak``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harnessdrive.mining.message import is_trailer

_MERGE = re.compile(
    r"^(Merge (pull request|branch|remote-tracking branch|commit|tag)\b|Merge .* (from|into) )",
    re.IGNORECASE,
)
_NO_INFORMATION = frozenset(
    {"fix", "fixes", "fixed", "update", "updates", "updated", "wip", "changes", "change", "misc",
     "minor", "tweak", "tweaks", "cleanup", "stuff", "tests", "test", "refactor", "bump", "typo"}
)  # fmt: skip
_URL = re.compile(r"https?://\S+")
_CHAT = re.compile(
    r"https?://(chatgpt\.com|chat\.openai\.com|claude\.ai|gemini\.google\.com|"
    r"copilot\.microsoft\.com|[\w.-]*\.devin\.ai|poe\.com|perplexity\.ai)/\S*",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*([-*+]|\d+[.)])\s+\S")
LARGE_CHANGE = 200
"""Changed lines above which a list of bullets no longer describes the change."""
WORDS_PER_LINE = 1 / 20
"""A prompt under one word per twenty changed lines (over 100 lines) is far shorter."""
SHORT_WITHOUT_LINKS = 40
"""Characters a prompt needs apart from its links to say something by itself."""

_RAISES = re.compile(
    r"(?:pytest\.raises|assertRaises(?:Regex)?|assertRaisesRegexp)\(\s*\(?\s*([A-Za-z_][\w.]*)"
    r"|toThrow(?:Error)?\(\s*([A-Z]\w*)\s*\)"
)
_MATCH = re.compile(
    r"""(?:match\s*=\s*r?|assertRaisesRegexp?\(\s*[\w.]+\s*,\s*r?|toThrow(?:Error)?\(\s*)"""
    r"""(["'])(.+?)\1"""
)
_STR_EQUALS = re.compile(r"""str\([\w.]+\)\s*==\s*r?(["'])(.+?)\1""")
_PRIVATE = re.compile(r"\.(_[a-z]\w*)\b|\bimport (_[a-z]\w*)\b")
_NEW_DEFAULT = re.compile(r"\b([a-z_]\w*)\s*(?::\s*[\w\[\], .|]+)?=\s*([^,)\s][^,)]*)")
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+\w+\s*\((.*)")


@dataclass(frozen=True)
class PromptQuality:
    problems: tuple[str, ...]
    """Why the prompt itself says too little (empty, merge boilerplate, ...)."""
    unstated: tuple[str, ...]
    """What the hidden tests pin and the prompt does not state."""

    @property
    def weak(self) -> bool:
        return bool(self.problems) or any(u.startswith("message ") for u in self.unstated)

    def reason(self) -> str:
        return "; ".join([*self.problems, *(f"tests pin {u}" for u in self.unstated)])

    def as_metadata(self) -> dict[str, object]:
        return {
            "weak": self.weak,
            "problems": list(self.problems),
            "unstated": list(self.unstated),
        }


def prompt_problems(subject: str, body: str, changed_lines: int) -> list[str]:
    """Why a commit's subject and body say too little to make the change from."""
    text = f"{subject}\n{body}".strip()
    words = re.findall(r"[A-Za-z0-9_]+", _URL.sub(" ", text))
    problems: list[str] = []
    if not words or all(w.lower() in _NO_INFORMATION for w in words):
        problems.append("empty prompt")
    elif not body and is_trailer(subject):
        problems.append("trailers only")
    if _MERGE.match(subject):
        problems.append("merge boilerplate")
    lines = [line for line in body.splitlines() if line.strip()]
    bullets = sum(1 for line in lines if _BULLET.match(line))
    if bullets >= 3 and bullets * 5 >= len(lines) * 3 and changed_lines > LARGE_CHANGE:
        problems.append(f"a list of {bullets} bullets over a {changed_lines}-line change")
    if _CHAT.search(text):
        problems.append("links to a chat session the agent cannot open")
    elif _URL.search(text) and len(_URL.sub("", text).strip()) < SHORT_WITHOUT_LINKS:
        problems.append("mostly a link the agent cannot open")
    if changed_lines > 100 and len(words) < changed_lines * WORDS_PER_LINE:
        problems.append(f"{len(words)} words for a {changed_lines}-line change")
    return problems


def added_lines(patch: bytes) -> list[str]:
    """The lines a unified diff adds (without their ``+``)."""
    text = patch.decode("utf-8", "replace")
    return [
        line[1:]
        for line in text.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]


def removed_lines(patch: bytes) -> list[str]:
    text = patch.decode("utf-8", "replace")
    return [
        line[1:]
        for line in text.splitlines()
        if line.startswith("-") and not line.startswith("---")
    ]


def unstated_pins(prompt: str, test_patch: bytes, gold_patch: bytes) -> list[str]:
    """What the tests' added lines pin that the prompt does not mention."""
    said = prompt.lower()
    tests = "\n".join(added_lines(test_patch))
    gold_added = "\n".join(added_lines(gold_patch))
    found: list[str] = []

    def note(kind: str, value: str) -> None:
        entry = f"{kind} {value}"
        if entry not in found:
            found.append(entry)

    for match in _RAISES.finditer(tests):
        name = (match.group(1) or match.group(2) or "").rsplit(".", 1)[-1]
        if name and name.lower() not in said:
            note("exception type", name)
    for pattern in (_MATCH, _STR_EQUALS):
        for match in pattern.finditer(tests):
            message = match.group(2)
            plain = re.sub(r"\\(.)", r"\1", message).strip("^$")
            if len(plain) >= 8 and plain.lower() not in said:
                note("message", repr(plain[:80]))
    for match in _PRIVATE.finditer(tests):
        name = match.group(1) or match.group(2)
        if name.startswith("__") or name.lower() in said:
            continue
        if re.search(rf"\b{re.escape(name)}\b", gold_added):  # the fix introduces it
            note("private name", name)
    old_defaults = set(_defaults(removed_lines(gold_patch)))
    for name, value in _defaults(added_lines(gold_patch)):
        if (name, value) in old_defaults or name.lower() in said:
            continue
        if re.search(rf"\b{re.escape(name)}\b", tests) or value in tests:
            note("default", f"{name}={value}")
    return found


def _defaults(lines: list[str]) -> list[tuple[str, str]]:
    found = []
    for line in lines:
        header = _DEF.match(line)
        if header is None:
            continue
        for match in _NEW_DEFAULT.finditer(header.group(1)):
            found.append((match.group(1), match.group(2).strip()))
    return found


def assess(
    subject: str, body: str, changed_lines: int, test_patch: bytes, gold_patch: bytes
) -> PromptQuality:
    problems = prompt_problems(subject, body, changed_lines)
    unstated = unstated_pins(f"{subject}\n{body}", test_patch, gold_patch)
    return PromptQuality(tuple(problems), tuple(unstated))
