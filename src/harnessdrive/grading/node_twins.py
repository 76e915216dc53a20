"""The tests of a hidden ``node --test`` file, and twins of a few of them.

There is no JavaScript parser here: a scanner blanks out strings, comments, regular expressions
and template text (keeping every offset), so that brackets and words can be matched on what is
left. A test is a ``test(...)`` or ``it(...)`` call (``.skip``/``.only``/``.todo`` too) whose
title is a plain string literal; its report case is found by that title.

A twin (see :mod:`harnessdrive.grading.twins` for the idea) copies one such call under another
title, cut after the first ``strictEqual``/``equal``/``deepStrictEqual``/``deepEqual`` call that
stands in the callback's own body (no ``return`` before it), with the expected argument made
into another value: a number literal plus a constant, a string literal with one more character,
anything else through an inline function that does the same at run time. It is inserted right
after its original, in the same scope, so it sees the same variables and the same ``assert``.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from harnessdrive.grading.earned import HiddenTest, node_hidden
from harnessdrive.grading.twins import TWINS_PER_FILE, Twin

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
_OTHER = (
    "((v) => typeof v === 'number' ? (Number.isFinite(v) ? v + 7919 + Math.abs(v) * 1000 : 0)"
    " : typeof v === 'bigint' ? v + 7919n : typeof v === 'string' ? v + '{mark}'"
    " : typeof v === 'boolean' ? !v : Array.isArray(v) ? [...v, 0]"
    " : v instanceof Map ? new Map([...v, ['{mark}', 0]]) : v instanceof Set"
    " ? new Set([...v, '{mark}']) : v && typeof v === 'object' ? {{ ...v, ['{mark}{mark}']: 0 }}"
    " : Symbol('{mark}'))"
)


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


def plant_node_twins(
    target: str,
    data: bytes,
    hidden: Sequence[HiddenTest],
    rng: random.Random,
    limit: int = TWINS_PER_FILE,
) -> tuple[bytes, list[Twin]]:
    """``data`` with twins of a few of its tests, each inserted right after its original."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data, []
    code = skeleton(text)
    may_skip = {t.name for t in hidden if t.may_skip}
    titles = {t.name for t in hidden}
    calls = [
        c
        for c in _calls(text, code)
        if c.title in titles
        and c.title not in may_skip
        and _starts_statement(code, c.start)
        and not _has_subtests(code, c)
    ]
    rng.shuffle(calls)
    words = sorted({w for t in titles for w in re.findall(r"[A-Za-z]+", t.lower())} | {"again"})
    taken = set(titles)
    inserts: list[tuple[int, str]] = []
    twins: list[Twin] = []
    for call in calls:
        if len(twins) >= limit:
            break
        assert call.title is not None
        title = _fresh_title(rng, words, taken)
        twin = _twin_call(text, code, call, title, rng)
        if twin is None:
            continue
        end = call.close + 1
        line_start = text.rfind("\n", 0, call.start) + 1
        indent = re.match(r"[ \t]*", text[line_start:]).group()  # type: ignore[union-attr]
        guard = ""
        if text.startswith(";", end):
            end += 1
        else:
            guard = ";"  # the original's statement may go on without one
        inserts.append((end, f"\n{indent}{guard}{twin};"))
        twins.append(Twin(target, "", title, call.title))
    for at, snippet in sorted(inserts, reverse=True):
        text = text[:at] + snippet + text[at:]
    return (text.encode("utf-8"), twins) if twins else (data, [])


def _starts_statement(code: str, at: int) -> bool:
    before = code[:at].rstrip()
    if not before or before[-1] in ";{}":
        return True
    return before[-1] == ")" and "\n" in code[len(before) : at]


def _twin_call(text: str, code: str, call: _Call, title: str, rng: random.Random) -> str | None:
    """The text of the twin of ``call``, titled ``title``; None when it cannot be made safely."""
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
        cut = _first_assertion(code, body_open + 1, body_close, block=True)
        if cut is None:
            return None
        _, args_open, args_close = cut
        changed = _perturb_call(text, code, args_open, args_close, rng)
        if changed is None:
            return None
        line_start = text.rfind("\n", 0, body_close) + 1
        closing = re.match(r"[ \t]*", text[line_start:]).group()  # type: ignore[union-attr]
        body = text[body_open:args_open] + changed + ";\n" + closing + "}"
        tail = text[body_close + 1 : call.close + 1]
    else:
        cut = _first_assertion(code, body_open, call.close, block=False)
        if cut is None or cut[0] != body_open:
            return None
        _, args_open, args_close = cut
        changed = _perturb_call(text, code, args_open, args_close, rng)
        if changed is None:
            return None
        body = text[body_open:args_open] + changed
        tail = text[args_close + 1 : call.close + 1]
    begin, end = call.title_span
    return text[call.start : begin] + json.dumps(title) + text[end:body_open] + body + tail


def _first_assertion(
    code: str, begin: int, end: int, *, block: bool
) -> tuple[int, int, int] | None:
    """The first equality assertion in the callback's own body: its start, and the offsets of
    its argument list's brackets."""
    depth = 0
    k = begin
    while k < end:
        c = code[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and code.startswith("return", k) and _word_at(code, k, "return"):
            return None
        elif depth == 0 and (c.isalpha() or c in "_$"):
            hit = _EQUAL_CALL.match(code, k)
            if hit is not None and (not block or _starts_statement(code, k)):
                args_open = hit.end() - 1
                args_close = _match(code, args_open)
                if args_close is None or args_close > end:
                    return None
                return k, args_open, args_close
            word = re.match(r"[\w$]+", code[k:])
            k += word.end() if word else 1
            continue
        k += 1
    return None


def _word_at(code: str, at: int, word: str) -> bool:
    before = code[at - 1] if at else " "
    after = code[at + len(word)] if at + len(word) < len(code) else " "
    return not (before.isalnum() or before in "_$.") and not (after.isalnum() or after in "_$")


def _perturb_call(
    text: str, code: str, args_open: int, args_close: int, rng: random.Random
) -> str | None:
    """The argument list ``(actual, expected, ...)`` with the expectation perturbed."""
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
    args = [text[a + 1 : b] for a, b in itertools.pairwise(cuts)]
    if len(args) < 2 or any("..." in a for a in args[:2]):
        return None
    literal = [_is_literal(args[0].strip()), _is_literal(args[1].strip())]
    which = 0 if literal == [True, False] else 1
    args[which] = _other(args[which], rng)
    return "(" + ",".join(args) + ")"


def _is_literal(arg: str) -> bool:
    return bool(_NUMBER.fullmatch(arg) or _PLAIN_STRING.fullmatch(arg))


def _other(arg: str, rng: random.Random) -> str:
    stripped = arg.strip()
    lead = arg[: len(arg) - len(arg.lstrip())]
    mark = rng.choice("qxzjk")
    if _NUMBER.fullmatch(stripped):
        value = float(stripped) if "." in stripped else int(stripped)
        return f"{lead}{value + rng.randint(1000, 9999)}"
    if _PLAIN_STRING.fullmatch(stripped):
        return f"{lead}{stripped[:-1]}{mark}{stripped[-1]}"
    return f"{lead}{_OTHER.format(mark=mark)}({stripped})"


def _fresh_title(rng: random.Random, words: Sequence[str], taken: set[str]) -> str:
    size = 2
    for attempt in range(200):
        title = " ".join(rng.sample(list(words), min(size, len(words))))
        if title not in taken:
            taken.add(title)
            return title
        if attempt % 20 == 19:
            size += 1
    title = f"{' '.join(words[:2])} {rng.randrange(10**6)}"
    taken.add(title)
    return title
