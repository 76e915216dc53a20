"""How grading commands are rewritten, and which loading routes in a change are findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.grading.routes import TreeChange, route_findings
from harnessdrive.grading.runners import prepare
from harnessdrive.workspace.changes import Changes, FileChange


def prepared(command: str) -> tuple[str, str | None, bool, bool]:
    p = prepare(
        command,
        launcher=Path("/ro/hdrun.py"),
        python="/env/bin/python",
        junit=Path("/out/junit.xml"),
        copy=Path("/copy"),
        own_modules=(),
        run_all=True,
    )
    return p.command, p.runner, p.selects, p.passes_status


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("/env/bin/python -m pytest -q tests", "/env/bin/python -s /ro/hdrun.py pytest -q tests"),
        ("X=1 python3 -m unittest discover", "X=1 python3 -s /ro/hdrun.py unittest discover"),
        ("cd sub && pytest -q", "cd sub && /env/bin/python -s /ro/hdrun.py pytest-bare -q"),
        (".venv/bin/pytest", ".venv/bin/python -s /ro/hdrun.py pytest-bare"),
        ("python -X dev -m pytest", "python -X dev -s /ro/hdrun.py pytest"),
    ],
)
def test_python_runners_start_through_the_launcher(command: str, expected: str) -> None:
    assert prepared(command)[0] == expected


def test_node_gets_its_junit_reporter_unless_the_command_names_a_reporter() -> None:
    command, runner, _, _ = prepared("node --test test/")
    assert runner == "node"
    assert "--test-reporter=junit --test-reporter-destination=/out/junit.xml" in command
    assert prepared("node --test --test-reporter=tap")[0] == "node --test --test-reporter=tap"


def test_commands_we_do_not_know_run_as_written() -> None:
    for command in ("npm test", "uv run pytest -q", "make check", "tox -e py311"):
        assert prepared(command)[:2] == (command, None)


def test_selection_and_masked_status_are_noticed() -> None:
    assert prepared("python -m pytest -k slow")[2]
    assert prepared("python -m pytest tests/test_a.py::test_b")[2]
    assert prepared("python -m unittest tests.test_a.TestB")[2]
    assert not prepared("python -m pytest tests")[2]
    assert not prepared("python -m pytest tests || true")[3]
    assert not prepared("python -m pytest tests | tee log")[3]
    assert prepared("python -m pytest tests && echo ok")[3]


def change(path: str, kind: str = "added") -> FileChange:
    return FileChange(path, kind, None, "100644", "b" * 40, 1, 0, False)  # type: ignore[arg-type]


def findings(paths: list[str], base: dict[str, bytes] | None = None,
             new: bytes = b"") -> list[tuple[str, str | None]]:  # fmt: skip
    files = tuple(change(p) for p in paths)
    tree = TreeChange.of(Changes("a", "b", files, b""))
    known = base or {}
    found = []
    for item in files:
        found += route_findings(item, new, known.get, tree)
    return [(f.code, f.path) for f in found]


def test_modules_that_stand_in_for_the_runner_or_the_stdlib_are_findings() -> None:
    assert findings(["pytest.py"]) == [("runner-shadow", "pytest.py")]
    assert findings(["src/pluggy/__init__.py"]) == [("runner-shadow", "src/pluggy/__init__.py")]
    assert findings(["lib/deep/er/_pytest/__init__.py"]) == [
        ("runner-shadow", "lib/deep/er/_pytest/__init__.py")
    ]
    assert findings(["json.py", "unittest/__init__.py"]) == [
        ("runner-shadow", "json.py"),
        ("runner-shadow", "unittest/__init__.py"),
    ]
    assert findings(["pytest_evil.cpython-311-x86_64-linux-gnu.so"])[0][0] == "runner-shadow"


def test_modules_inside_a_package_or_deep_in_the_tree_are_ordinary_code() -> None:
    assert findings(["pkg/__init__.py", "pkg/json.py", "pkg/types.py"]) == []
    assert findings(["pkg/json.py"], base={"pkg/__init__.py": b""}) == []
    assert findings(["scripts/tools/json.py", "test.py", "calc.py"]) == []


def test_package_metadata_and_node_settings_are_findings() -> None:
    assert findings(["evil-1.0.dist-info/METADATA"]) == [
        ("package-metadata", "evil-1.0.dist-info/METADATA")
    ]
    assert findings(["x/EGG-INFO/entry_points.txt"], new=b"[pytest11]\nx = y\n") == [
        ("package-metadata", "x/EGG-INFO/entry_points.txt")
    ]
    assert findings([".npmrc"]) == [("test-config", ".npmrc")]
    assert findings([".mocharc.json"]) == [("test-config", ".mocharc.json")]
    base = {"package.json": b'{"scripts": {"test": "node --test"}}'}
    assert findings(["package.json"], base, new=b'{"scripts": {"test": "true"}}') == [
        ("test-config", "package.json")
    ]
    unchanged = b'{"version": "2.0.0", "scripts": {"test": "node --test"}}'
    assert findings(["package.json"], base, new=unchanged) == []
