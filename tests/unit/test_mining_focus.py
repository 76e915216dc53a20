from __future__ import annotations

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
            "python3 -m pytest -q tests/unit/test_a.py tests/integration/test_b.py",
        ),
        (
            ".venv/bin/python -m pytest -q -p no:cacheprovider tests/unit",
            FILES,
            ".venv/bin/python -m pytest -q -p no:cacheprovider tests/unit/test_a.py",
        ),
        (
            "pytest tests --ignore=tests/integration -m 'not slow'",
            FILES,
            "pytest --ignore=tests/integration -m 'not slow' tests/unit/test_a.py",
        ),
        (
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -m pytest -q",
            ["tests/test_x y.py"],
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -m pytest -q 'tests/test_x y.py'",
        ),
        ("uv run pytest -q", ["pkg/ops_test.py"], "uv run pytest -q pkg/ops_test.py"),
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
    assert narrowed == "{python} -m pytest tests/test_a.py"
