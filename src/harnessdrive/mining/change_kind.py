"""Whether a mined commit changes code, or only tests, comments, docstrings and layout.

A change that leaves the code as it was cannot be a task for fixing code, whatever its tests
do (a docstring edit can fix a doctest). Mining records the verdict in each task's metadata
(``change_kind``) and ``check`` refuses the task.

Python files are compared as syntax trees without their docstrings. Other languages are
compared token by token with their comments left out, where a simple rule finds comments (the
``//`` and ``/* */`` family, the ``#`` family); every changed line must also be blank or a
comment line, so a rule that misreads a file can only make a change count as code. Files of
other kinds (configuration, data) always count as code; documentation never does.
"""

from __future__ import annotations

import ast
import difflib
import re
from pathlib import Path, PurePosixPath
from typing import Literal

from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.contents import read_blobs

ChangeKind = Literal["code", "comments-only", "tests-only"]

_SLASH_COMMENTS = frozenset(
    {".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".java", ".cs", ".go", ".kt",
     ".kts", ".swift", ".dart", ".groovy", ".php", ".m", ".mm"}
)  # fmt: skip
_HASH_COMMENTS = frozenset({".sh", ".bash", ".zsh", ".fish", ".rb", ".pl", ".pm", ".r", ".ex",
                            ".exs", ".nim", ".jl"})  # fmt: skip
_PYTHON = frozenset({".py", ".pyi"})

_SLASH_TOKENS = re.compile(
    r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|\w+|\S""", re.DOTALL
)
_HASH_TOKENS = re.compile(r"""\#[^\n]*|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|\w+|\S""")
_SLASH_LINE = re.compile(r"^\s*(//|/\*|\*|$)")
_HASH_LINE = re.compile(r"^\s*(#(?![!{])|$)")


def change_kind(candidate: Candidate, contents: dict[str, bytes]) -> ChangeKind:
    """``code`` unless every file of the gold patch is documentation or changes only comments,
    docstrings or layout; ``tests-only`` when the gold patch changes nothing but documentation.

    ``contents`` holds every gold file's old and new blob by id (see :func:`gold_contents`)."""
    changes = [candidate.change(path) for path in candidate.gold_files]
    kinds = [c for c in changes if c.kind in ("source", "other")]
    if not kinds:
        return "tests-only"
    for change in kinds:
        if change.kind == "other" or change.binary:
            return "code"
        before = contents.get(change.old_blob, b"") if change.old_blob else b""
        after = contents.get(change.new_blob, b"") if change.new_blob else b""
        if code_changed(change.path, before, after):
            return "code"
    return "comments-only"


def gold_contents(repo: Path, candidate: Candidate) -> dict[str, bytes]:
    """Old and new blobs of the candidate's gold source files, in one git call."""
    blobs = [
        blob
        for path in candidate.gold_files
        for change in [candidate.change(path)]
        if change.kind == "source" and not change.binary
        for blob in (change.old_blob, change.new_blob)
        if blob
    ]
    return read_blobs(repo, blobs)


def code_changed(path: str, before: bytes, after: bytes) -> bool:
    """Whether going from ``before`` to ``after`` changes the code of the file at ``path``."""
    if before == after:
        return False
    suffix = PurePosixPath(path).suffix.lower()
    try:
        old, new = before.decode("utf-8"), after.decode("utf-8")
    except UnicodeDecodeError:
        return True
    if suffix in _PYTHON:
        shapes = _python_shape(old), _python_shape(new)
        return None in shapes or shapes[0] != shapes[1]
    if suffix in _SLASH_COMMENTS:
        return not _only_comments(old, new, _SLASH_TOKENS, "//", "/*", _SLASH_LINE)
    if suffix in _HASH_COMMENTS:
        return not _only_comments(old, new, _HASH_TOKENS, "#", "#", _HASH_LINE)
    return True


def _python_shape(text: str) -> str | None:
    """The syntax tree without docstrings, as text; None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:]
    return ast.dump(tree)


def _only_comments(
    old: str,
    new: str,
    tokens: re.Pattern[str],
    line: str,
    block: str,
    comment_line: re.Pattern[str],
) -> bool:
    def code(text: str) -> list[str]:
        return [t for t in tokens.findall(text) if not t.startswith((line, block))]

    if code(old) != code(new):
        return False
    changed = [
        text[1:]
        for text in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
        if text[:1] in "+-" and not text.startswith(("+++", "---"))
    ]
    return all(comment_line.match(text) for text in changed)
