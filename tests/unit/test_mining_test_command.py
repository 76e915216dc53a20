from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.mining import DetectedCommand, detect_test_command
from harnessdrive.mining.environments import python_test_command


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def package(test: object = "vitest run") -> str:
    return json.dumps({"name": "x", "scripts": {"test": test}})


PYTEST = ("python3 -m pytest -q",)


@pytest.mark.parametrize(
    ("files", "command", "source"),
    [
        ({"package.json": package()}, "npm test", "package.json scripts.test"),
        (
            {"package.json": package(), "package-lock.json": "{}"},
            "npm test",
            "package.json scripts.test",
        ),
        (
            {"package.json": package(), "pnpm-lock.yaml": ""},
            "pnpm test",
            "package.json scripts.test",
        ),
        ({"package.json": package(), "yarn.lock": ""}, "yarn test", "package.json scripts.test"),
        (
            {"package.json": package(), "bun.lock": ""},
            "bun run test",
            "package.json scripts.test",
        ),
        (
            {"package.json": package(), "bun.lockb": ""},
            "bun run test",
            "package.json scripts.test",
        ),
        # pnpm's lockfile wins over yarn's, yarn's over bun's
        (
            {"package.json": package(), "pnpm-lock.yaml": "", "yarn.lock": "", "bun.lock": ""},
            "pnpm test",
            "package.json scripts.test",
        ),
        (
            {"package.json": package(), "yarn.lock": "", "bun.lock": ""},
            "yarn test",
            "package.json scripts.test",
        ),
        ({"pytest.ini": "[pytest]\n"}, "python3 -m pytest -q", "pytest.ini"),
        ({"pytest.ini": ""}, "python3 -m pytest -q", "pytest.ini"),
        (
            {"pyproject.toml": "[tool.pytest.ini_options]\n"},
            "python3 -m pytest -q",
            "pyproject.toml",
        ),
        ({"setup.cfg": "[tool:pytest]\n"}, "python3 -m pytest -q", "setup.cfg"),
        ({"tox.ini": "[pytest]\naddopts = -q\n"}, "python3 -m pytest -q", "tox.ini"),
        ({"conftest.py": ""}, "python3 -m pytest -q", "conftest.py"),
        ({"tests/conftest.py": ""}, "python3 -m pytest -q", "tests/conftest.py"),
        ({"test/conftest.py": ""}, "python3 -m pytest -q", "test/conftest.py"),
        ({"tests/test_ops.py": ""}, "python3 -m pytest -q", "test files in tests/"),
        ({"pytest.ini": "", "uv.lock": ""}, "uv run pytest -q", "pytest.ini"),
        ({"tests/test_ops.py": "", "uv.lock": ""}, "uv run pytest -q", "test files in tests/"),
        ({"go.mod": "module x\n"}, "go test ./...", "go.mod"),
        ({"Cargo.toml": "[package]\n"}, "cargo test", "Cargo.toml"),
        ({"Makefile": "all:\n\ttrue\n\ntest:\n\tpytest\n"}, "make test", "Makefile test target"),
        ({"Makefile": "test :: build\n\ttrue\n"}, "make test", "Makefile test target"),
        # the order between kinds of project
        (
            {"package.json": package(), "pytest.ini": "", "go.mod": ""},
            "npm test",
            "package.json scripts.test",
        ),
        (
            {"tests/conftest.py": "", "go.mod": "", "Cargo.toml": ""},
            "python3 -m pytest -q",
            "tests/conftest.py",
        ),
        ({"go.mod": "", "Cargo.toml": "", "Makefile": "test:\n"}, "go test ./...", "go.mod"),
        ({"Cargo.toml": "", "Makefile": "test:\n"}, "cargo test", "Cargo.toml"),
        # the pytest setups, in their order
        ({"pytest.ini": "", "pyproject.toml": "[tool.pytest]"}, *PYTEST, "pytest.ini"),
        (
            {"pyproject.toml": "[tool.pytest.ini_options]", "setup.cfg": "[tool:pytest]"},
            *PYTEST,
            "pyproject.toml",
        ),
        ({"setup.cfg": "[tool:pytest]", "tox.ini": "[pytest]"}, *PYTEST, "setup.cfg"),
        ({"tox.ini": "[pytest]", "conftest.py": ""}, *PYTEST, "tox.ini"),
        ({"conftest.py": "", "tests/conftest.py": ""}, *PYTEST, "conftest.py"),
        ({"tests/conftest.py": "", "test/conftest.py": ""}, *PYTEST, "tests/conftest.py"),
        # files that do not qualify fall through to the next rule
        ({"package.json": package(), "go.mod": ""}, "npm test", "package.json scripts.test"),
        (
            {"package.json": package('echo "Error: no test specified" && exit 1'), "go.mod": ""},
            "go test ./...",
            "go.mod",
        ),
        ({"package.json": package(""), "go.mod": ""}, "go test ./...", "go.mod"),
        ({"package.json": package(None), "go.mod": ""}, "go test ./...", "go.mod"),
        ({"package.json": package(["jest"]), "go.mod": ""}, "go test ./...", "go.mod"),
        ({"package.json": "{not json", "go.mod": ""}, "go test ./...", "go.mod"),
        ({"package.json": "[1, 2]", "go.mod": ""}, "go test ./...", "go.mod"),
        ({"package.json": '{"scripts": []}', "go.mod": ""}, "go test ./...", "go.mod"),
        ({"pyproject.toml": "[project]\nname = 'x'\n", "go.mod": ""}, "go test ./...", "go.mod"),
        ({"setup.cfg": "[metadata]\n", "go.mod": ""}, "go test ./...", "go.mod"),
        ({"tox.ini": "[tox]\n", "go.mod": ""}, "go test ./...", "go.mod"),
        ({"tests/helpers.py": "", "go.mod": ""}, "go test ./...", "go.mod"),
        ({"src/test_ops.py": "", "go.mod": ""}, "go test ./...", "go.mod"),
    ],
)
def test_detection(tmp_path: Path, files: dict[str, str], command: str, source: str) -> None:
    assert detect_test_command(write(tmp_path, files)) == DetectedCommand(command, source)


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"README.md": "run `pytest`"},
        {"Makefile": "build:\n\ttrue\n"},
        {"Makefile": "testing:\n\ttrue\n"},
        {"Makefile": "test := pytest\n"},
        {"Makefile": "  test:\n"},
        {"package.json": package('echo "Error: no test specified" && exit 1')},
        {"setup.py": "from setuptools import setup\n"},
    ],
)
def test_nothing_found(tmp_path: Path, files: dict[str, str]) -> None:
    assert detect_test_command(write(tmp_path, files)) is None


def test_a_folder_named_like_a_file_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "go.mod").mkdir()
    (tmp_path / "pytest.ini").mkdir()
    assert detect_test_command(tmp_path) is None


def test_text_that_is_not_utf8_is_read_anyway(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_bytes(b"# caf\xe9\n[tool.pytest.ini_options]\n")
    assert detect_test_command(str(tmp_path)) == DetectedCommand(
        "python3 -m pytest -q", "pyproject.toml"
    )


@pytest.mark.parametrize(
    ("detected", "runs"),
    [
        ("python3 -m pytest -q", ".venv/bin/python -m pytest -q"),
        # uv run would sync an environment in every copy, from the network that grading lacks.
        ("uv run pytest -q", ".venv/bin/python -m pytest -q"),
        ("npm test", "npm test"),
    ],
)
def test_a_detected_python_command_runs_in_the_copys_environment(detected: str, runs: str) -> None:
    assert python_test_command(detected) == runs


def test_doctests_run_where_tox_runs_them(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "tox.ini").write_text(
        "[testenv]\ncommands =\n    pytest --doctest-modules --doctest-glob '*.rst' src tests"
        " {posargs}\n"
    )
    found = detect_test_command(tmp_path)
    assert found == DetectedCommand(
        "python3 -m pytest -q --doctest-modules --doctest-glob '*.rst' src tests",
        "pytest.ini (doctests as tox.ini runs them)",
    )
    (tmp_path / "tox.ini").write_text("[testenv]\ncommands = pytest {posargs} tests\n")
    assert detect_test_command(tmp_path) == DetectedCommand("python3 -m pytest -q", "pytest.ini")
