"""Test runners: the one table of their test-file conventions and the files that steer them.

Every name here is a file its tool reads by itself (or a test-file convention of the tool), as
its documentation lists it, written out in full. The classifier calls these
files tests (so a commit's changes to them are hidden), and a mined task restores them before
grading (so an agent's edit to one never counts). A task lists only the runners its repository
has: those of its languages, narrowed to the ones it shows signs of using.

Mixed files that also hold build or package settings (``pyproject.toml``, ``setup.cfg``,
``package.json``, ``pom.xml``, ``build.gradle``, ``vite.config.*``) are left out: restoring them
would undo legitimate changes. The grader's tamper checks read the pytest part of the Python ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from harnessdrive.tasks.globs import compile_globs, compile_names

Language = Literal[
    "python", "javascript", "go", "rust", "jvm", "ruby", "php", "elixir", "dotnet", "swift"
]

LANGUAGE_EXTENSIONS: Mapping[Language, tuple[str, ...]] = {
    "python": (".py", ".pyi", ".pyx"),
    "javascript": (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte"),
    "go": (".go",),
    "rust": (".rs",),
    "jvm": (".java", ".kt", ".kts", ".scala", ".groovy"),
    "ruby": (".rb",),
    "php": (".php",),
    "elixir": (".ex", ".exs"),
    "dotnet": (".cs", ".fs", ".vb"),
    "swift": (".swift",),
}


@dataclass(frozen=True)
class Runner:
    name: str
    language: Language
    settings: tuple[str, ...] = ()
    """Files the runner reads that change which tests run or how they are judged (globs)."""
    test_files: tuple[str, ...] = ()
    """Its test-file naming conventions (globs of file names)."""
    markers: tuple[str, ...] = ()
    """Further files whose presence shows the runner is used (globs)."""
    words: tuple[str, ...] = ()
    """Names that, in the test command or a package manifest, show the runner is used."""
    default: bool = False
    """Assumed for every repository in its language: it needs no sign."""


# The source extensions of JavaScript and TypeScript test files (jest, vitest and node's
# default patterns between them).
_JS_TEST_EXTENSIONS = ("js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts")
_JS_TEST_FILES = tuple(
    f"?*.{kind}.{ext}" for kind in ("test", "spec") for ext in _JS_TEST_EXTENSIONS
)

RUNNERS: tuple[Runner, ...] = (
    # Python
    Runner(
        "pytest",
        "python",
        settings=("conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml"),
        test_files=("test_*.py", "?*_test.py"),
        words=("pytest", "py.test"),
        default=True,
    ),
    Runner("unittest", "python", test_files=("test_*.py",), words=("unittest",), default=True),
    Runner("tox", "python", settings=("tox.ini", "tox.toml"), words=("tox",)),
    Runner("nox", "python", settings=("noxfile.py",), words=("nox",)),
    # JavaScript and TypeScript
    Runner(
        "jest",
        "javascript",
        settings=(
            "jest.config.js",
            "jest.config.ts",
            "jest.config.mjs",
            "jest.config.cjs",
            "jest.config.cts",
            "jest.config.json",
        ),
        test_files=_JS_TEST_FILES,
        words=("jest",),
    ),
    Runner(
        "vitest",
        "javascript",
        settings=(
            "vitest.config.js",
            "vitest.config.mjs",
            "vitest.config.cjs",
            "vitest.config.ts",
            "vitest.config.mts",
            "vitest.config.cts",
            "vitest.workspace.js",
            "vitest.workspace.ts",
            "vitest.workspace.json",
        ),
        test_files=_JS_TEST_FILES,
        words=("vitest",),
    ),
    Runner(
        "mocha",
        "javascript",
        settings=(
            ".mocharc.js",
            ".mocharc.cjs",
            ".mocharc.yaml",
            ".mocharc.yml",
            ".mocharc.json",
            ".mocharc.jsonc",
        ),
        test_files=_JS_TEST_FILES,
        words=("mocha",),
    ),
    Runner(
        "nyc",
        "javascript",
        settings=(".nycrc", ".nycrc.json", ".nycrc.yaml", ".nycrc.yml", "nyc.config.js"),
        words=("nyc",),
    ),
    Runner(
        "karma",
        "javascript",
        settings=("karma.conf.js", "karma.conf.ts", "karma.conf.coffee"),
        words=("karma",),
    ),
    Runner(
        "ava",
        "javascript",
        settings=("ava.config.js", "ava.config.cjs", "ava.config.mjs"),
        test_files=_JS_TEST_FILES,
        words=("ava",),
    ),
    Runner(
        "playwright",
        "javascript",
        settings=(
            "playwright.config.ts",
            "playwright.config.js",
            "playwright.config.mts",
            "playwright.config.mjs",
            "playwright.config.cts",
            "playwright.config.cjs",
        ),
        test_files=_JS_TEST_FILES,
        words=("playwright",),
    ),
    Runner("node-test", "javascript", test_files=_JS_TEST_FILES, words=("node --test",)),
    # Go, Rust
    Runner("go-test", "go", test_files=("?*_test.go",), default=True),
    Runner(
        "cargo-test",
        "rust",
        # A `runner` in .cargo/config.toml replaces how every test binary is run.
        settings=("**/.cargo/config.toml", "**/.cargo/config", ".config/nextest.toml"),
        default=True,
    ),
    # JVM: JUnit's conventions; maven's own option files can skip tests.
    Runner(
        "junit",
        "jvm",
        test_files=(
            "*Test.java",
            "*Tests.java",
            "*Test.kt",
            "*Tests.kt",
            "*Test.scala",
            "*Tests.scala",
        ),
        default=True,
    ),
    Runner(
        "maven",
        "jvm",
        settings=(".mvn/maven.config", ".mvn/jvm.config"),
        markers=("pom.xml",),
        words=("mvn", "mvnw"),
    ),
    # Ruby, PHP, Elixir
    Runner(
        "rspec",
        "ruby",
        settings=(".rspec", ".rspec-local"),
        test_files=("?*_spec.rb",),
        words=("rspec",),
    ),
    Runner("minitest", "ruby", test_files=("test_*.rb", "?*_test.rb"), words=("minitest",)),
    Runner(
        "phpunit",
        "php",
        settings=("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml"),
        test_files=("*Test.php", "*Tests.php"),
        default=True,
    ),
    Runner("exunit", "elixir", test_files=("?*_test.exs",), default=True),
    # .NET, Swift
    Runner(
        "dotnet-test",
        "dotnet",
        settings=("*.runsettings", "xunit.runner.json"),
        test_files=("*Test.cs", "*Tests.cs"),
        default=True,
    ),
    Runner(
        "xctest",
        "swift",
        settings=("*.xctestplan",),
        test_files=("*Test.swift", "*Tests.swift"),
        default=True,
    ),
)

_SETTINGS_NAME = compile_names(
    dict.fromkeys(g for r in RUNNERS for g in r.settings if "/" not in g)
)
# The settings that live in a folder of their own (``.cargo/config.toml``), matched on the path.
_SETTINGS_PATH = compile_globs(dict.fromkeys(g for r in RUNNERS for g in r.settings if "/" in g))

# Manifests whose text may name a runner (a dependency or a script).
MANIFEST_NAMES = ("package.json", "Gemfile", "composer.json", "pyproject.toml")


def is_runner_settings(path: str) -> bool:
    """True for a file a runner reads as its settings (``tox.ini``, ``conftest.py``,
    ``jest.config.ts``, ...): it may change how tests run, but holds no test of its own."""
    if _SETTINGS_NAME.fullmatch(path.rsplit("/", 1)[-1]) is not None:
        return True
    return _SETTINGS_PATH.match(path) is not None


def all_runner_globs() -> tuple[str, ...]:
    """Every test-file and settings glob of every runner, once each."""
    return tuple(dict.fromkeys(g for r in RUNNERS for g in (*r.test_files, *r.settings)))


def repository_languages(paths: Iterable[str]) -> frozenset[Language]:
    by_extension = {ext: lang for lang, exts in LANGUAGE_EXTENSIONS.items() for ext in exts}
    found: set[Language] = set()
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        dot = name.rfind(".")
        if dot > 0 and (language := by_extension.get(name[dot:].lower())) is not None:
            found.add(language)
    return frozenset(found)


def select_runners(
    paths: Iterable[str], *, test_command: str, manifests: Iterable[str] = ()
) -> tuple[Runner, ...]:
    """The runners a repository has, from its file paths, test command and manifest texts.

    A runner counts when its language is present and it is the language's default, or one of its
    settings or marker files exists, or its name appears in the test command or a manifest. A
    language where no runner shows a sign keeps all of its runners: we cannot tell which one runs.
    """
    paths = list(paths)
    languages = repository_languages(paths)
    text = "\n".join((test_command, *manifests))
    chosen: list[Runner] = []
    for language in LANGUAGE_EXTENSIONS:
        if language not in languages:
            continue
        mine = [r for r in RUNNERS if r.language == language]
        signed = [r for r in mine if _has_sign(r, paths, text)]
        if not signed:
            chosen.extend(mine)
        else:
            chosen.extend(r for r in mine if r.default or r in signed)
    return tuple(chosen)


def _has_sign(runner: Runner, paths: list[str], text: str) -> bool:
    if any(_named(word, text) for word in runner.words):
        return True
    files = runner.settings + runner.markers
    if not files:
        return False
    present = compile_globs(files)
    return any(present.match(path) for path in paths)


def _named(word: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w])", text) is not None
