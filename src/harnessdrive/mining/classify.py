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

from harnessdrive.mining.runners import all_runner_globs
from harnessdrive.tasks.globs import compile_globs, compile_names

FileKind = Literal["test", "doc", "source", "other"]

# A folder with one of these names holds tests, wherever it sits. `testing` is deliberately
# absent: libraries such as numpy.testing ship importable code there.
TEST_FOLDERS: frozenset[str] = frozenset(
    {"test", "tests", "__tests__", "spec", "specs", "testdata", "__snapshots__", "__mocks__"}
)

# Test files by name, and the files that steer a test runner (an edit to one can switch tests
# off), wherever they sit: both come from the runner table.
TEST_NAME_GLOBS: tuple[str, ...] = all_runner_globs()

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


# A mined task's ``restored`` list begins with these; the runner table gives the rest.
TEST_FOLDER_GLOBS: tuple[str, ...] = tuple(f"**/{folder}/**" for folder in sorted(TEST_FOLDERS))
TEST_GLOBS: tuple[str, ...] = (*TEST_FOLDER_GLOBS, *TEST_NAME_GLOBS)
"""Every test path rule as globs: a path matches exactly when classify_path calls it a test."""


def _anchored(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


# Split for speed: folder names by set, file names by one expression, the few globs that
# name a folder (``.mvn/maven.config``) on the whole path.
_TEST_NAME = compile_names([g for g in TEST_NAME_GLOBS if "/" not in g])
_TEST_PATH = compile_globs([g for g in TEST_NAME_GLOBS if "/" in g])
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
    if (
        _TEST_NAME.fullmatch(name)
        or any(folder in TEST_FOLDERS for folder in folders)
        or _TEST_PATH.match(path)
    ):
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
