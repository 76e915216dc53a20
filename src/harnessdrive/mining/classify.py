"""What a changed path is: a test, a doc, source code, or anything else.

Every rule lives in the tables below, so that the history scan, the task builder and validation
agree on what a hidden test is. Paths are repository paths with forward slashes, as git prints
them. Precedence: test, then doc, then source, then other; so ``tests/README.md`` is a test
file (an agent must not see it) and ``docs/conf.py`` is a doc.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

FileKind = Literal["test", "doc", "source", "other"]

# A folder with one of these names holds tests, wherever it sits. `testing` is deliberately
# absent: libraries such as numpy.testing ship importable code there.
TEST_FOLDERS: frozenset[str] = frozenset(
    {"test", "tests", "__tests__", "spec", "specs", "testdata", "__snapshots__", "__mocks__"}
)

_JS_TS = r"[cm]?[jt]sx?"  # js, jsx, mjs, cjs, ts, tsx, mts, cts

# File names that are tests in their language, whatever folder they sit in.
TEST_FILE_PATTERNS: tuple[str, ...] = (
    r"test_.*\.py",  # pytest / unittest
    r".+_test\.py",
    r"conftest\.py",
    r".+_test\.go",
    rf".+\.(test|spec)\.{_JS_TS}",
    r".+_spec\.rb",
    r".+_test\.exs",
    r".*Tests?\.(java|kt|scala|swift|php|cs)",  # JUnit, Kotlin, ScalaTest, XCTest, PHPUnit, xUnit
)

# Test-runner settings: an edit to one of these can switch tests off, so they are hidden tests.
TEST_RUNNER_SETTINGS_PATTERNS: tuple[str, ...] = (
    r"pytest\.ini",
    r"tox\.ini",
    r"noxfile\.py",
    r"phpunit\.xml(\.dist)?",
    r"\.mocharc(\..+)?",
    r"\.nycrc(\..+)?",
    r"\.rspec",
    r"\.rspec-local",
    rf"(jest|vitest|karma)\.conf(ig)?\.{_JS_TS}(on)?",
    rf"vitest\.workspace\.{_JS_TS}(on)?",
    rf"(ava|playwright)\.config\.{_JS_TS}",
)

DOC_FOLDERS: frozenset[str] = frozenset({"doc", "docs"})
DOC_EXTENSIONS: frozenset[str] = frozenset(
    {".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".asciidoc"}
)
# Matched case-insensitively, with or without an extension (LICENSE, License.md, CHANGES.rst).
DOC_FILE_STEMS: tuple[str, ...] = (
    "LICENSE",
    "LICENCE",
    "COPYING",
    "CHANGELOG",
    "CHANGES",
    "HISTORY",
    "NEWS",
    "AUTHORS",
    "CONTRIBUTORS",
    "NOTICE",
)

SOURCE_EXTENSIONS: frozenset[str] = frozenset(
    {
        # Python
        ".py", ".pyi", ".pyx", ".pxd",
        # JavaScript, TypeScript and their component formats
        ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte",
        # Go, Rust, Zig, Nim
        ".go", ".rs", ".zig", ".nim",
        # JVM
        ".java", ".kt", ".kts", ".scala", ".groovy", ".clj", ".cljs", ".cljc",
        # Ruby, PHP, Perl, Lua, R, Julia
        ".rb", ".php", ".pl", ".pm", ".lua", ".r", ".jl",
        # C, C++, Objective-C
        ".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".ipp", ".inl",
        ".m", ".mm",
        # .NET
        ".cs", ".fs", ".fsx", ".vb",
        # Swift, Dart
        ".swift", ".dart",
        # Elixir, Erlang, Haskell, OCaml
        ".ex", ".exs", ".erl", ".hrl", ".hs", ".ml", ".mli",
        # shells
        ".sh", ".bash", ".zsh", ".fish", ".ps1",
        # SQL
        ".sql",
    }
)  # fmt: skip

# Files whose change means installed dependencies may be stale, so a setup command must run
# again after they are written. Matched against the file name only.
DEPENDENCY_FILE_PATTERNS: tuple[str, ...] = (
    # JavaScript
    r"package\.json",
    r"package-lock\.json",
    r"npm-shrinkwrap\.json",
    r"yarn\.lock",
    r"pnpm-lock\.yaml",
    r"pnpm-workspace\.yaml",
    r"bun\.lockb?",
    r"deno\.json",
    r"deno\.lock",
    # Python
    r"pyproject\.toml",
    r"setup\.py",
    r"setup\.cfg",
    r"requirements[\w.-]*\.(txt|in)",
    r"constraints[\w.-]*\.txt",
    r"Pipfile",
    r"Pipfile\.lock",
    r"poetry\.lock",
    r"pdm\.lock",
    r"uv\.lock",
    r"environment\.ya?ml",
    # Go, Rust
    r"go\.mod",
    r"go\.sum",
    r"go\.work",
    r"go\.work\.sum",
    r"Cargo\.toml",
    r"Cargo\.lock",
    # Ruby, PHP, Elixir
    r"Gemfile",
    r"Gemfile\.lock",
    r".+\.gemspec",
    r"composer\.json",
    r"composer\.lock",
    r"mix\.exs",
    r"mix\.lock",
    # JVM, .NET, Swift, Dart
    r"pom\.xml",
    r"build\.gradle(\.kts)?",
    r"settings\.gradle(\.kts)?",
    r"gradle\.lockfile",
    r"libs\.versions\.toml",
    r".+\.csproj",
    r"packages\.lock\.json",
    r"Directory\.Packages\.props",
    r"Package\.swift",
    r"Package\.resolved",
    r"Podfile",
    r"Podfile\.lock",
    r"pubspec\.yaml",
    r"pubspec\.lock",
    # tool versions
    r"\.tool-versions",
    r"\.nvmrc",
    r"\.node-version",
    r"\.python-version",
    r"rust-toolchain(\.toml)?",
)


# The same rules as globs (see harnessdrive.tasks.globs), for a mined task's ``restored`` list:
# the agent's edits to any test file are put back before grading. Built from the tables above;
# a test checks that a path matches these globs exactly when classify_path calls it a test.
_JS_TS_EXTENSIONS = tuple(
    f"{prefix}{base}{x}" for prefix in ("", "c", "m") for base in ("js", "ts") for x in ("", "x")
)
TEST_GLOBS: tuple[str, ...] = (
    *(f"**/{folder}/**" for folder in sorted(TEST_FOLDERS)),
    "test_*.py",
    "?*_test.py",
    "conftest.py",
    "?*_test.go",
    *(f"?*.{kind}.{ext}" for kind in ("test", "spec") for ext in _JS_TS_EXTENSIONS),
    "?*_spec.rb",
    "?*_test.exs",
    *(
        f"*{word}.{ext}"
        for word in ("Test", "Tests")
        for ext in ("java", "kt", "scala", "swift", "php", "cs")
    ),
    "pytest.ini",
    "tox.ini",
    "noxfile.py",
    "phpunit.xml",
    "phpunit.xml.dist",
    ".mocharc",
    ".mocharc.?*",
    ".nycrc",
    ".nycrc.?*",
    ".rspec",
    ".rspec-local",
    *(
        f"{tool}.{conf}.{ext}{on}"
        for tool in ("jest", "vitest", "karma")
        for conf in ("conf", "config")
        for ext in _JS_TS_EXTENSIONS
        for on in ("", "on")
    ),
    *(f"vitest.workspace.{ext}{on}" for ext in _JS_TS_EXTENSIONS for on in ("", "on")),
    *(f"{tool}.config.{ext}" for tool in ("ava", "playwright") for ext in _JS_TS_EXTENSIONS),
)


def _anchored(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


_TEST_NAME = _anchored(TEST_FILE_PATTERNS + TEST_RUNNER_SETTINGS_PATTERNS)
_DEPENDENCY_NAME = _anchored(DEPENDENCY_FILE_PATTERNS)
_DOC_STEMS = frozenset(DOC_FILE_STEMS)


def _extension(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def _is_doc_name(name: str) -> bool:
    upper = name.upper()
    stem = upper.split(".", 1)[0]
    return stem in _DOC_STEMS or any(upper.startswith(s + "-") for s in ("LICENSE", "LICENCE"))


@lru_cache(maxsize=65536)
def classify_path(path: str) -> FileKind:
    """The kind of a repository path: ``test``, ``doc``, ``source`` or ``other``."""
    *folders, name = path.split("/")
    if _TEST_NAME.fullmatch(name) or any(folder in TEST_FOLDERS for folder in folders):
        return "test"
    extension = _extension(name)
    if (
        extension in DOC_EXTENSIONS
        or any(folder.lower() in DOC_FOLDERS for folder in folders)
        or _is_doc_name(name)
    ):
        return "doc"
    return "source" if extension in SOURCE_EXTENSIONS else "other"


def is_dependency_file(path: str) -> bool:
    """True for a dependency manifest or lockfile, in any folder."""
    return _DEPENDENCY_NAME.fullmatch(path.rsplit("/", 1)[-1]) is not None
