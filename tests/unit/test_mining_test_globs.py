"""The ``restored`` globs of a mined task say "test file" exactly when classify_path does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harnessdrive.mining.classify import TEST_FOLDERS, TEST_GLOBS, classify_path
from harnessdrive.tasks.globs import matches

CORPUS = [
    "tests/test_a.py", "src/tests/data/x.json", "a/b/__snapshots__/c.snap", "spec/x_spec.rb",
    "test_ops.py", "pkg/ops_test.py", "_test.py", "conftest.py", "src/conftest.py",
    "server/handler_test.go", "_test.go", "web/app.test.tsx", "web/app.spec.cjs", ".test.js",
    "web/app.test.mjsx", "lib/user_spec.rb", "apps/router_test.exs", "AppTest.java",
    "Test.java", "src/ParserTests.swift", "Lib/ParserTest.cs", "pytest.ini", "cfg/tox.ini",
    "noxfile.py", "phpunit.xml", "phpunit.xml.dist", ".mocharc", ".mocharc.yml",
    ".mocharc.", ".nycrc.json", ".rspec", ".rspec-local", "jest.config.js", "jest.config.json",
    "jest.conf.ts", "karma.conf.js", "vitest.workspace.ts", "ava.config.cjs",
    "playwright.config.ts", "playwright.config.json", "numpy/testing/utils.py",
    "testing/helpers.py", "src/test_utils/x.py", "src/tests.py", "mytests/a.py", "README.md",
    "src/app.py", "src/app.test", "app.testjs", "Tests/x.py", "test/", "docs/tests.md",
    "tests", "jest.config.yaml", "AppTest.javax", "pytest.ini.bak",
]  # fmt: skip


@pytest.mark.parametrize("path", CORPUS)
def test_globs_and_classifier_agree(path: str) -> None:
    assert matches(path, TEST_GLOBS) == (classify_path(path) == "test")


_WORDS = [
    *sorted(TEST_FOLDERS), "src", "testing", "Test", "lib", "a", ".",
    "test_", "_test", ".test", ".spec", "_spec", "Test", "Tests", "conftest", "jest",
    ".config", ".conf", ".py", ".js", ".tsx", ".mjs", ".json", ".go", ".rb", ".exs", ".java",
    ".ini", "pytest", "tox", ".mocharc", ".nycrc", ".rspec", "-local", "x", ".dist",
]  # fmt: skip
_PIECES = st.sampled_from(_WORDS)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(_PIECES, min_size=1, max_size=4).map("".join), min_size=1, max_size=4))
def test_globs_and_classifier_agree_on_made_up_paths(parts: list[str]) -> None:
    path = "/".join(parts)
    assert matches(path, TEST_GLOBS) == (classify_path(path) == "test"), path
