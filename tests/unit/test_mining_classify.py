from __future__ import annotations

import pytest

from harnessdrive.mining.classify import (
    SOURCE_EXTENSIONS,
    TEST_FOLDERS,
    classify_path,
    is_dependency_file,
)


@pytest.mark.parametrize("folder", sorted(TEST_FOLDERS))
@pytest.mark.parametrize("where", ["{}/data.json", "pkg/{}/helpers.py", "a/b/{}/c/README.md"])
def test_anything_inside_a_test_folder_is_a_test(folder: str, where: str) -> None:
    assert classify_path(where.format(folder)) == "test"


@pytest.mark.parametrize(
    "path",
    [
        "numpy/testing/utils.py",
        "testing/helpers.py",
        "src/test_utils/x.py",  # only the exact folder names count
        "src/tests.py",  # a file named like a folder
        "mytests/a.py",
        "Testing/run.go",
    ],
)
def test_folders_that_merely_look_like_test_folders_hold_source(path: str) -> None:
    assert classify_path(path) == "source"


@pytest.mark.parametrize(
    "path",
    [
        # Python
        "test_ops.py",
        "src/pkg/test_ops.py",
        "pkg/ops_test.py",
        "conftest.py",
        "src/pkg/conftest.py",
        # Go
        "server/handler_test.go",
        # JavaScript and TypeScript, every extension
        "web/app.test.js",
        "web/app.test.jsx",
        "web/app.test.mjs",
        "web/app.test.cjs",
        "web/app.test.ts",
        "web/app.test.tsx",
        "web/app.test.mts",
        "web/app.test.cts",
        "web/app.spec.js",
        "web/app.spec.jsx",
        "web/app.spec.mjs",
        "web/app.spec.cjs",
        "web/app.spec.ts",
        "web/app.spec.tsx",
        "web/app.spec.mts",
        "web/app.spec.cts",
        # Ruby, Elixir
        "lib/models/user_spec.rb",
        "apps/web/router_test.exs",
        # JVM, Swift, PHP, C#
        "src/main/java/AppTest.java",
        "src/main/java/AppTests.java",
        "app/src/ParserTest.kt",
        "core/ParserTest.scala",
        "Sources/ParserTests.swift",
        "Sources/ParserTest.swift",
        "src/ParserTest.php",
        "Lib/ParserTests.cs",
        "Lib/ParserTest.cs",
    ],
)
def test_test_file_names_in_every_language(path: str) -> None:
    assert classify_path(path) == "test"


@pytest.mark.parametrize(
    "path",
    [
        "pytest.ini",
        "tox.ini",
        "noxfile.py",
        "phpunit.xml",
        "phpunit.xml.dist",
        ".mocharc.cjs",
        ".mocharc.yml",
        ".mocharc.json",
        ".mocharc.js",
        ".nycrc",
        ".nycrc.json",
        ".rspec",
        ".rspec-local",
        "jest.config.js",
        "jest.config.ts",
        "jest.config.mjs",
        "jest.config.json",
        "vitest.config.ts",
        "web/vitest.config.mts",
        "vitest.workspace.ts",
        "karma.conf.js",
        "ava.config.js",
        "ava.config.cjs",
        "playwright.config.ts",
        "e2e/playwright.config.js",
    ],
)
def test_test_runner_settings_are_tests(path: str) -> None:
    assert classify_path(path) == "test"


@pytest.mark.parametrize(
    "path",
    [
        "src/contest.py",  # ends in "test" but is not test_x / x_test
        "src/latest.py",
        "src/Latest.java",  # "test", not "Test"
        "src/Contest.kt",
        "src/testament.go",
        "web/test.ts",  # no name before .test
        "web/app.tests.ts",
        "src/attest_test.rs",  # Rust keeps unit tests inline; only tests/ counts
        "lib/user_spec.py",
    ],
)
def test_names_near_the_patterns_are_source(path: str) -> None:
    assert classify_path(path) == "source"


@pytest.mark.parametrize(
    "path",
    [
        "README.md",
        "guide.markdown",
        "page.mdx",
        "docs/guide.rst",
        "notes.txt",
        "requirements.txt",  # text, by the seed's rule
        "manual.adoc",
        "docs/conf.py",  # anything under docs/
        "doc/diagram.png",
        "pkg/docs/api.py",
        "Docs/index.html",
        "LICENSE",
        "LICENSE.md",
        "LICENSE-MIT",
        "License.txt",
        "COPYING",
        "CHANGELOG",
        "CHANGELOG.md",
        "CHANGES.rst",
        "HISTORY.md",
        "NEWS",
        "AUTHORS",
        "CONTRIBUTORS",
        "NOTICE",
    ],
)
def test_docs(path: str) -> None:
    assert classify_path(path) == "doc"


@pytest.mark.parametrize("extension", sorted(SOURCE_EXTENSIONS))
def test_every_source_extension_is_source(extension: str) -> None:
    assert classify_path(f"src/module{extension}") == "source"


@pytest.mark.parametrize(
    "path",
    [
        "src/ops.py",
        "cmd/main.go",
        "src/lib.rs",
        "src/App.java",
        "lib/app.rb",
        "src/main.c",
        "src/main.cpp",
        "src/Program.cs",
        "Sources/App.swift",
        "app/Main.kt",
        "src/index.php",
        "scripts/build.sh",
        "web/app.tsx",
        "src/MAIN.PY",  # extensions are case-insensitive
    ],
)
def test_source_in_each_listed_language(path: str) -> None:
    assert classify_path(path) == "source"


@pytest.mark.parametrize(
    "path",
    [
        "package.json",
        "config/settings.yaml",
        "Makefile",
        "Dockerfile",
        ".github/workflows/ci.yml",
        "assets/logo.png",
        "data.csv",
        "bin/tool",
        ".gitignore",
    ],
)
def test_everything_else_is_other(path: str) -> None:
    assert classify_path(path) == "other"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("tests/README.md", "test"),  # a doc inside tests/ is still hidden from the agent
        ("docs/tests/example.py", "test"),
        ("docs/test_examples.py", "test"),
        ("spec/fixtures/LICENSE", "test"),
    ],
)
def test_test_wins_over_doc(path: str, kind: str) -> None:
    assert classify_path(path) == kind


@pytest.mark.parametrize(
    "path",
    [
        "package.json",
        "web/package.json",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lock",
        "bun.lockb",
        "pyproject.toml",
        "requirements.txt",
        "requirements-dev.txt",
        "requirements.dev.txt",
        "setup.py",
        "setup.cfg",
        "Pipfile",
        "Pipfile.lock",
        "poetry.lock",
        "uv.lock",
        "pdm.lock",
        "go.mod",
        "go.sum",
        "Cargo.toml",
        "crates/core/Cargo.toml",
        "Cargo.lock",
        "Gemfile",
        "Gemfile.lock",
        "mylib.gemspec",
        "composer.json",
        "composer.lock",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "mix.exs",
        "mix.lock",
        "Package.swift",
        "Package.resolved",
        "App.csproj",
        "pubspec.yaml",
        ".nvmrc",
        ".python-version",
        "rust-toolchain.toml",
    ],
)
def test_dependency_manifests_and_lockfiles(path: str) -> None:
    assert is_dependency_file(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/package.py",
        "package.json.bak",
        "docs/requirements.md",
        "Cargo.toml.orig",
        "go.mod.txt",
        "tests/test_setup.py",
        "README.md",
    ],
)
def test_other_files_are_not_dependency_files(path: str) -> None:
    assert not is_dependency_file(path)
