"""The tests of a hidden ``node --test`` file, and the twin of one of them.

There is no JavaScript parser here: a scanner blanks out strings, comments, regular expressions
and template text (keeping every offset), so that brackets and words can be matched on what is
left. A test is a ``test(...)`` or ``it(...)`` call (``.skip``/``.only``/``.todo`` too) whose
title is a plain string literal; its report case is found by that title.

A twin (see :mod:`harnessdrive.grading.twins` for the idea) is the hidden file with the expected
argument of one ``strictEqual``/``equal``/``deepStrictEqual``/``deepEqual`` call perturbed where
it stands: a call in a test's callback's own body, before any ``return``, whose expected
argument is a literal (a number gets a small constant added, a string one more character, an
array of those its last item perturbed). Nothing else of the file changes: the title, the line,
the stack a thrown error shows are the original's.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from harnessdrive.grading.earned import HiddenTest, node_hidden
from harnessdrive.grading.twins import Twin

_KEYWORDS = frozenset(
    {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw",
     "yield", "await", "instanceof"}
)  # fmt: skip
_REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^")
_TEST_CALL = re.compile(r"(?<![\w$.])(?:test|it)(?:\.(?:test|it))?(?:\.(?:skip|only|todo))?\s*\(")
_GROUP_CALL = re.compile(r"(?<![\w$.])(?:test\.)?(?:describe|suite)(?:\.(?:skip|only|todo))?\s*\(")
_SUBTEST_CALL = re.compile(r"(?<![\w$])[A-Za-z_$][\w$]*\.test\s*\(")
_EQUAL_CALL = re.compile(
    r"(?<![\w$])(?:[A-Za-z_$][\w$]*\s*\.\s*)*(?:strictEqual|equal|deepStrictEqual|deepEqual)\s*\("
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_PLAIN_STRING = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*\"""")
_ITEM = r"""(?:-?\d+(?:\.\d+)?|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
_ARRAY = re.compile(rf"\[\s*(?:{_ITEM}\s*(?:,\s*{_ITEM}\s*)*,?\s*)?\]")
_ARRAY_ITEM = re.compile(_ITEM)


@dataclass(frozen=True)
class _Call:
    start: int
    open: int
    """The offset of the call's ``(``."""
    close: int
    """The offset of its ``)``."""
    title: str | None
    title_span: tuple[int, int] = (0, 0)


def skeleton(text: str) -> str:
    """``text`` with the inside of strings, comments, regular expressions and template text
    replaced by spaces (newlines kept): what is left is code, at the same offsets."""
    out = list(text)
    modes = ["code"]
    depths = [0]
    prev = ""
    i, n = 0, len(text)

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if modes[-1] == "template":
            if c == "\\":
                blank(i, i + 2)
                i += 2
            elif c == "`":
                modes.pop()
                prev = "x"
                i += 1
            elif c == "$" and text.startswith("${", i):
                modes.append("code")
                depths.append(0)
                i += 2
            else:
                blank(i, i + 1)
                i += 1
            continue
        if c in "'\"":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            prev, i = "x", j + 1
        elif c == "`":
            modes.append("template")
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "/" and (prev == "" or prev in _REGEX_AFTER or prev in _KEYWORDS):
            j, in_class = i + 1, False
            while j < n and text[j] != "\n":
                if text[j] == "\\":
                    j += 2
                    continue
                if text[j] == "[":
                    in_class = True
                elif text[j] == "]":
                    in_class = False
                elif text[j] == "/" and not in_class:
                    break
                j += 1
            blank(i + 1, j)
            prev, i = "x", j + 1
        elif c.isalnum() or c in "_$":
            j = i
            while j < n and (text[j].isalnum() or text[j] in "_$"):
                j += 1
            prev, i = text[i:j], j
        else:
            if c == "{":
                depths[-1] += 1
            elif c == "}":
                if depths[-1] == 0 and len(modes) > 1:
                    modes.pop()
                    depths.pop()
                    i += 1
                    continue
                depths[-1] -= 1
            if not c.isspace():
                prev = c
            i += 1
    return "".join(out)


def _match(code: str, open_at: int) -> int | None:
    """The offset of the bracket that closes the one at ``open_at``."""
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] in "([{":
            depth += 1
        elif code[k] in ")]}":
            depth -= 1
            if depth == 0:
                return k
    return None


def _string_value(literal: str) -> str | None:
    """A plain JavaScript string literal's value, when it has no escapes but simple ones."""
    if len(literal) < 2 or literal[0] not in "'\"`" or literal[-1] != literal[0]:
        return None
    inner = literal[1:-1]
    if literal[0] == "`" and "${" in inner:
        return None
    if "\\" not in inner:
        return inner
    if literal[0] == '"':
        try:
            value = json.loads(literal)
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    return None


def _calls(text: str, code: str, pattern: re.Pattern[str] = _TEST_CALL) -> list[_Call]:
    found = []
    for hit in pattern.finditer(code):
        open_at = hit.end() - 1
        close = _match(code, open_at)
        if close is None:
            continue
        head = re.match(r"\s*", text[open_at + 1 :])
        at = open_at + 1 + (head.end() if head else 0)
        title, span = None, (0, 0)
        if at < len(text) and text[at] in "'\"`":
            end = code.find(text[at], at + 1) if text[at] != "`" else text.find("`", at + 1)
            if end > at:
                title, span = _string_value(text[at : end + 1]), (at, end + 1)
        found.append(_Call(hit.start(), open_at, close, title, span))
    return found


def node_tests(target: str, data: bytes) -> list[HiddenTest] | None:
    """The titled tests of a hidden node file (None: not a node test file)."""
    if not target.endswith((".js", ".mjs", ".cjs")) or b"node:test" not in data:
        return None
    text = data.decode("utf-8", errors="replace")
    code = skeleton(text)
    groups = _groups(text, code)
    calls = _calls(text, code) + _calls(text, code, _SUBTEST_CALL)
    titled = [
        (c.title, text[c.start : c.close + 1], _headers_around(c, groups))
        for c in calls
        if c.title and not _has_subtests(code, c)
    ]
    return node_hidden(target, titled)


def _groups(text: str, code: str) -> list[tuple[int, int, str]]:
    """Each ``describe(...)`` call: its span and its header (up to its callback)."""
    found = []
    for hit in _GROUP_CALL.finditer(code):
        close = _match(code, hit.end() - 1)
        if close is None:
            continue
        body = re.search(r"=>|\bfunction\b", code[hit.end() : close])
        header_end = hit.end() + body.start() if body else close
        found.append((hit.start(), close, text[hit.start() : header_end]))
    return found


def _headers_around(call: _Call, groups: Sequence[tuple[int, int, str]]) -> str:
    return " ".join(header for a, b, header in groups if a < call.start and call.close <= b)


def _has_subtests(code: str, call: _Call) -> bool:
    """A test with subtests is reported as a group of them, not as a case of its own."""
    return _SUBTEST_CALL.search(code, call.open, call.close) is not None


def perturbed_node_file(
    target: str, data: bytes, hidden: Sequence[HiddenTest], rng: random.Random
) -> tuple[bytes, Twin] | None:
    """``data`` with the expected argument of one equality assertion of one of ``hidden``'s
    tests perturbed in place (same lines, same title), drawn at random; None when none can."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    code = skeleton(text)
    may_skip = {t.name for t in hidden if t.may_skip}
    titles = {t.name for t in hidden}
    calls = _calls(text, code)
    seen = Counter(c.title for c in calls + _calls(text, code, _SUBTEST_CALL) if c.title)
    candidates = [
        c
        for c in calls
        if c.title in titles
        and c.title not in may_skip
        and seen[c.title] == 1
        and _starts_statement(code, c.start)
        and not _has_subtests(code, c)
    ]
    rng.shuffle(candidates)
    for call in candidates:
        assert call.title is not None
        span = _expectation(text, code, call)
        if span is None:
            continue
        begin, end = span
        other = _other(text[begin:end], rng)
        if other is None:
            continue
        changed = text[:begin] + other + text[end:]
        return changed.encode("utf-8"), Twin(target, "", call.title)
    return None


def _starts_statement(code: str, at: int) -> bool:
    before = code[:at].rstrip()
    if not before or before[-1] in ";{}":
        return True
    return before[-1] == ")" and "\n" in code[len(before) : at]


def _expectation(text: str, code: str, call: _Call) -> tuple[int, int] | None:
    """The span of a literal expected argument of an equality assertion sure to be reached in
    the callback of ``call``: the first one there is, in its own body, before any ``return``."""
    inside = code[call.open + 1 : call.close]
    arrow = inside.find("=>")
    function = re.search(r"\bfunction\b[^{]*\{", inside)
    if arrow < 0 and function is None:
        return None
    if function is not None and (arrow < 0 or function.start() < arrow):
        body_open = call.open + 1 + function.end() - 1
    else:
        after = call.open + 1 + arrow + 2
        gap = re.match(r"\s*", code[after:])
        body_open = after + (gap.end() if gap else 0)
    if body_open >= call.close:
        return None
    if code[body_open] == "{":
        body_close = _match(code, body_open)
        if body_close is None or body_close > call.close:
            return None
        found = _assertions(code, body_open + 1, body_close, block=True)
    else:
        found = [a for a in _assertions(code, body_open, call.close, block=False)[:1]]
        if found and found[0][0] != body_open:
            return None
    for _, args_open, args_close in found:
        span = _expected_argument(text, code, args_open, args_close)
        if span is not None:
            return span
    return None


def _assertions(code: str, begin: int, end: int, *, block: bool) -> list[tuple[int, int, int]]:
    """The equality assertions standing in a callback's own body, up to its first ``return``:
    each one's start, and the offsets of its argument list's brackets."""
    found: list[tuple[int, int, int]] = []
    depth = 0
    k = begin
    while k < end:
        c = code[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and code.startswith("return", k) and _word_at(code, k, "return"):
            return found
        elif depth == 0 and (c.isalpha() or c in "_$"):
            hit = _EQUAL_CALL.match(code, k)
            if hit is not None and (not block or _starts_statement(code, k)):
                args_open = hit.end() - 1
                args_close = _match(code, args_open)
                if args_close is None or args_close > end:
                    return found
                found.append((k, args_open, args_close))
                k = args_close + 1
                continue
            word = re.match(r"[\w$]+", code[k:])
            k += word.end() if word else 1
            continue
        k += 1
    return found


def _word_at(code: str, at: int, word: str) -> bool:
    before = code[at - 1] if at else " "
    after = code[at + len(word)] if at + len(word) < len(code) else " "
    return not (before.isalnum() or before in "_$.") and not (after.isalnum() or after in "_$")


def _expected_argument(
    text: str, code: str, args_open: int, args_close: int
) -> tuple[int, int] | None:
    """The span of the expected argument of ``(actual, expected, ...)`` when it is a literal
    (a number, a plain string, an array of those) and the actual one is not."""
    cuts = [args_open]
    depth = 0
    for k in range(args_open + 1, args_close):
        if code[k] in "([{":
            depth += 1
        elif code[k] in ")]}":
            depth -= 1
        elif code[k] == "," and depth == 0:
            cuts.append(k)
    cuts.append(args_close)
    if len(cuts) < 3:
        return None
    spans = [(a + 1, b) for a, b in itertools.pairwise(cuts)][:2]
    args = [text[a:b].strip() for a, b in spans]
    literal = [_is_literal(a) for a in args]
    if not literal[1] or literal[0]:
        return None
    begin, end = spans[1]
    begin += len(text[begin:end]) - len(text[begin:end].lstrip())
    end -= len(text[begin:end]) - len(text[begin:end].rstrip())
    return begin, end


def _is_literal(arg: str) -> bool:
    return bool(_NUMBER.fullmatch(arg) or _PLAIN_STRING.fullmatch(arg) or _ARRAY.fullmatch(arg))


def _other(literal: str, rng: random.Random) -> str | None:
    """Another value of the literal's type, written on the same line."""
    mark = rng.choice("aeiostnrl")
    if _NUMBER.fullmatch(literal):
        if "." in literal:
            value = float(literal)
            moved = round(value + (abs(value) + 1) * rng.randint(1, 9), 9)
            return repr(moved) if math.isfinite(moved) and moved != value else None
        return str(int(literal) + rng.randint(1, 97))
    if _PLAIN_STRING.fullmatch(literal):
        return f"{literal[:-1]}{mark}{literal[-1]}"
    if _ARRAY.fullmatch(literal):
        items = list(_ARRAY_ITEM.finditer(literal))
        if not items:
            return f"[{rng.randint(1, 97)}]"
        last = items[-1]
        other = _other(last.group(), rng)
        if other is None:
            return None
        return literal[: last.start()] + other + literal[last.end() :]
    return None
