"""The test command narrowed to one commit's own test files, for rejecting candidates fast.

A candidate whose own tests already pass on its parent cannot be a task, and running only those
files takes seconds where the whole suite may take minutes. The narrowed command is an
optimisation only: it can reject, never accept, so a runner we cannot narrow just gets no fast
check. It is made for pytest, unittest, ``go test`` and the package managers' ``test`` scripts,
and only for simple command lines (no pipes, lists or redirections). A narrowed pytest command
prints the interpreter's tracebacks (``--tb=native``) unless the command chooses a style itself.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence

_SAFE_TOKEN = re.compile(r"[\w@%+=:,./{}-]+")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_SHELL_PUNCTUATION = frozenset("();<>|&")
# pytest options whose value may come as the next word.
_PYTEST_VALUE_OPTIONS = frozenset(
    {
        "-k", "-m", "-p", "-c", "-o", "-W", "-n", "-r",
        "--ignore", "--ignore-glob", "--deselect", "--rootdir", "--basetemp", "--confcutdir",
        "--junitxml", "--junit-xml", "--maxfail", "--durations", "--tb", "--import-mode",
        "--dist", "--timeout", "--log-level", "--capture", "--override-ini", "--cov",
        "--cov-report", "--cov-config", "--randomly-seed",
    }
)  # fmt: skip
_UNITTEST_FLAGS = frozenset({"-v", "-q", "-f", "-b", "-c", "--verbose", "--quiet", "--failfast"})
_PACKAGE_TEST = (("npm", "test"), ("npm", "t"), ("pnpm", "test"), ("yarn", "test"),
                 ("bun", "run", "test"), ("npm", "run", "test"), ("pnpm", "run", "test"),
                 ("yarn", "run", "test"))  # fmt: skip
NATIVE_TRACEBACKS = "--tb=native"
_PYTHON_TEST = re.compile(r"test_.*\.py|.+_test\.py")
_JS_TEST = re.compile(r".+\.(test|spec)\.[cm]?[jt]sx?")


def focused_command(command: str, test_files: Sequence[str]) -> str | None:
    """``command`` limited to ``test_files`` (the commit's test files that exist after it), or
    None when the runner or the command line is not one we can narrow safely."""
    tokens = _tokens(command)
    if tokens is None or not test_files:
        return None
    # ``TZ=UTC npm test``: the variables stay in front of the narrowed command.
    assignments = 0
    while assignments < len(tokens) and _ASSIGNMENT.fullmatch(tokens[assignments]):
        assignments += 1
    prefix, rest = tokens[:assignments], tokens[assignments:]
    for narrow in (_pytest, _unittest, _go_test, _package_script):
        found = narrow(rest, list(test_files))
        if found is not None:
            return " ".join([*(_assignment(a) for a in prefix), found])
    return None


def is_pytest_command(command: str) -> bool:
    """Whether ``command`` is a simple command line that runs pytest."""
    tokens = _tokens(command)
    if tokens is None:
        return False
    while tokens and _ASSIGNMENT.fullmatch(tokens[0]):
        tokens = tokens[1:]
    return _pytest_start(tokens) is not None


def _tokens(command: str) -> list[str] | None:
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return None
    if any(token and set(token) <= _SHELL_PUNCTUATION for token in tokens):
        return None
    return tokens


def _join(tokens: Sequence[str]) -> str:
    # Placeholders such as {python} must stay bare for the grader to fill them in.
    return " ".join(t if _SAFE_TOKEN.fullmatch(t) else shlex.quote(t) for t in tokens)


def _assignment(token: str) -> str:
    """``NAME=value`` for the shell: only the value is quoted, or it is no assignment."""
    name, _, value = token.partition("=")
    return f"{name}={value if _SAFE_TOKEN.fullmatch(value) else shlex.quote(value)}"


def _python_tests(files: list[str]) -> list[str]:
    """Test modules by their names (helpers and conftest.py in test folders are left out)."""
    return [f for f in files if _PYTHON_TEST.fullmatch(posixpath.basename(f))]


def _under(path: str, folder: str) -> bool:
    folder = folder.split("::", 1)[0].rstrip("/")
    folder = folder[2:] if folder.startswith("./") else folder
    return folder in ("", ".") or path == folder or path.startswith(folder + "/")


def _pytest(tokens: list[str], files: list[str]) -> str | None:
    start = _pytest_start(tokens)
    if start is None:
        return None
    kept, positional, ignored = tokens[: start + 1], [], []
    index = start + 1
    while index < len(tokens):
        token = tokens[index]
        if token == "--pyargs":
            return None  # positional arguments are module names then
        if token.startswith("-"):
            kept.append(token)
            name, has_value, value = token.partition("=")
            if name in _PYTEST_VALUE_OPTIONS and not has_value and index + 1 < len(tokens):
                index += 1
                kept.append(tokens[index])
                value = tokens[index]
            if name == "--ignore":
                ignored.append(value)
        else:
            positional.append(token)
        index += 1
    chosen = [
        f
        for f in _python_tests(files)
        if not any(_under(f, skip) for skip in ignored)
        and (not positional or any(_under(f, p) for p in positional))
    ]
    if not any(t.partition("=")[0] in ("--tb", "--full-trace") for t in kept):
        # These runs fail by design (before the fix). pytest's own traceback style parses each
        # failing test's whole file to show its source, tens of milliseconds per failure; the
        # interpreter's traceback names the same file, line and message at no such cost.
        kept.append(NATIVE_TRACEBACKS)
    return _join([*kept, *chosen]) if chosen else None


def _pytest_start(tokens: list[str]) -> int | None:
    for index, token in enumerate(tokens):
        if token == "-m" and index + 1 < len(tokens) and tokens[index + 1] == "pytest":
            return index + 1
        if posixpath.basename(token) in ("pytest", "py.test") and "=" not in token:
            return index
    return None


def _unittest(tokens: list[str], files: list[str]) -> str | None:
    for index, token in enumerate(tokens[:-1]):
        if token == "-m" and tokens[index + 1] == "unittest":
            flags = [t for t in tokens[index + 2 :] if t in _UNITTEST_FLAGS]
            chosen = _python_tests(files)
            return _join([*tokens[: index + 2], *flags, *chosen]) if chosen else None
    return None


def _go_test(tokens: list[str], files: list[str]) -> str | None:
    for index, token in enumerate(tokens[:-1]):
        if posixpath.basename(token) == "go" and tokens[index + 1] == "test":
            rest = tokens[index + 2 :]
            patterns = [t for t in rest if t.startswith("./") or t == "..." or "/..." in t]
            if not patterns:
                return None
            folders = sorted({posixpath.dirname(f) for f in files if f.endswith("_test.go")})
            if not folders:
                return None
            others = [t for t in rest if t not in patterns]
            packages = ["./" + folder if folder else "." for folder in folders]
            return _join([*tokens[: index + 2], *others, *packages])
    return None


def _package_script(tokens: list[str], files: list[str]) -> str | None:
    words = [posixpath.basename(t) for t in tokens]
    for prefix in _PACKAGE_TEST:
        if tuple(words[: len(prefix)]) == prefix:
            chosen = [f for f in files if _JS_TEST.fullmatch(posixpath.basename(f))]
            if not chosen:
                return None
            separator = [] if "--" in tokens else ["--"]
            return _join([*tokens, *separator, *chosen])
    return None
