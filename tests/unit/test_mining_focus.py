from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.mining.focus import focused_command

FILES = [
    "tests/unit/test_a.py",
    "tests/integration/test_b.py",
    "tests/conftest.py",
    "tests/util.py",
]


@pytest.mark.parametrize(
    ("command", "files", "expected"),
    [
        # pytest: the commit's test modules replace the command's own selection.
        (
            "python3 -m pytest -q",
            FILES,
            "python3 -m pytest -q --tb=native tests/unit/test_a.py tests/integration/test_b.py",
        ),
        (
            ".venv/bin/python -m pytest -q -p no:cacheprovider tests/unit",
            FILES,
            ".venv/bin/python -m pytest -q -p no:cacheprovider --tb=native tests/unit/test_a.py",
        ),
        (
            "pytest tests --ignore=tests/integration -m 'not slow'",
            FILES,
            "pytest --ignore=tests/integration -m 'not slow' --tb=native tests/unit/test_a.py",
        ),
        (
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -m pytest -q",
            ["tests/test_x y.py"],
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -m pytest -q --tb=native"
            " 'tests/test_x y.py'",
        ),
        ("uv run pytest -q", ["pkg/ops_test.py"], "uv run pytest -q --tb=native pkg/ops_test.py"),
        # a traceback style of the command's own is kept
        ("pytest --tb=short", ["t/test_a.py"], "pytest --tb=short t/test_a.py"),
        ("pytest --tb line", ["t/test_a.py"], "pytest --tb line t/test_a.py"),
        ("pytest --full-trace", ["t/test_a.py"], "pytest --full-trace t/test_a.py"),
        # unittest: the discovery arguments give way to the files.
        (
            ".venv/bin/python -m unittest discover -s tests -v",
            FILES,
            ".venv/bin/python -m unittest -v tests/unit/test_a.py tests/integration/test_b.py",
        ),
        # go test: the packages that hold the commit's tests.
        (
            "go test -race ./...",
            ["pkg/a/x_test.go", "y_test.go", "pkg/a/y_test.go"],
            "go test -race . ./pkg/a",
        ),
        # package scripts: the files go after --.
        ("npm test", ["src/a.test.ts", "src/b.ts"], "npm test -- src/a.test.ts"),
        ("yarn test -- --ci", ["web/x.spec.jsx"], "yarn test -- --ci web/x.spec.jsx"),
        # variables set in front of the command stay there (luxon's tests need TZ)
        (
            "TZ=America/New_York LANG=en_US npm test",
            ["test/a.test.js"],
            "TZ=America/New_York LANG=en_US npm test -- test/a.test.js",
        ),
        ("TZ='a b' go test ./...", ["x_test.go"], "TZ='a b' go test ."),
    ],
)
def test_commands_are_narrowed_to_the_commits_own_tests(
    command: str, files: list[str], expected: str
) -> None:
    assert focused_command(command, files) == expected


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("pytest && echo done", FILES),  # a list of commands
        ("pytest | tee log", FILES),
        ("pytest > log", FILES),
        ("pytest --pyargs pkg", FILES),  # positional arguments are modules then
        ("python3 -m pytest tests/other", FILES),  # no test of the commit in the selection
        ("python3 -m pytest", ["tests/conftest.py", "tests/data.json"]),  # no test module
        ("python3 -m pytest 'unclosed", FILES),
        ("cargo test", ["tests/api.rs"]),
        ("make test", FILES),
        ("go test", ["a_test.go"]),  # no package pattern to replace
        ("npm test", ["src/a.ts"]),
        ("python3 -m pytest", []),
    ],
)
def test_commands_that_cannot_be_narrowed_safely_get_no_fast_check(
    command: str, files: list[str]
) -> None:
    assert focused_command(command, files) is None


def test_placeholders_stay_bare_for_the_grader() -> None:
    narrowed = focused_command("{python} -m pytest", ["tests/test_a.py"])
    assert narrowed == "{python} -m pytest --tb=native tests/test_a.py"


def test_a_narrowed_pytest_run_prints_the_interpreters_tracebacks(tmp_path: Path) -> None:
    # Before the fix the narrowed run fails by design: its failures cost no source parsing.
    (tmp_path / "test_a.py").write_text("def test_a():\n    assert 1 == 2\n")
    narrowed = focused_command(f"{sys.executable} -m pytest -q -p no:cacheprovider", ["test_a.py"])
    assert narrowed is not None
    done = subprocess.run(narrowed, shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1
    assert 'File "' in done.stdout and "line 2, in test_a" in done.stdout
    assert "assert 1 == 2" in done.stdout
