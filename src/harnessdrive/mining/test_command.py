"""Find the command that runs a project's tests from the files at its top level.

The first match wins, in this order: the ``test`` script in package.json, a pytest setup,
go.mod, Cargo.toml, a Makefile ``test`` target. When nothing matches, the command CI runs is
usually in ``.github/workflows`` or the README.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

# npm init writes this placeholder: "echo \"Error: no test specified\" && exit 1".
_NPM_PLACEHOLDER = "no test specified"
_MAKE_TEST_TARGET = re.compile(r"^test\s*::?(?!=)", re.MULTILINE)

# (file, text it must contain): the pytest setups, in the order they are tried.
_PYTEST_SETUPS: tuple[tuple[str, str], ...] = (
    ("pytest.ini", ""),
    ("pyproject.toml", "[tool.pytest"),
    ("setup.cfg", "[tool:pytest]"),
    ("tox.ini", "[pytest]"),
    ("conftest.py", ""),
    ("tests/conftest.py", ""),
    ("test/conftest.py", ""),
)


@dataclass(frozen=True)
class DetectedCommand:
    command: str
    source: str
    """What it came from, recorded as ``test_cmd_source``: ``package.json scripts.test``..."""


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _package_json_test(root: Path) -> DetectedCommand | None:
    try:
        scripts = json.loads(_read(root / "package.json") or "{}").get("scripts") or {}
        script = scripts.get("test")
    except (ValueError, AttributeError):
        return None
    if not isinstance(script, str) or not script.strip() or _NPM_PLACEHOLDER in script:
        return None
    if (root / "pnpm-lock.yaml").exists():
        runner = "pnpm test"
    elif (root / "yarn.lock").exists():
        runner = "yarn test"
    elif (root / "bun.lock").exists() or (root / "bun.lockb").exists():
        runner = "bun run test"  # `bun test` would run bun's own runner, not the script
    else:
        runner = "npm test"
    return DetectedCommand(runner, "package.json scripts.test")


def _pytest(root: Path) -> DetectedCommand | None:
    found = _pytest_setup(root)
    if found is None:
        return None
    doctests = tox_doctest_arguments(root)
    if not doctests:
        return found
    return DetectedCommand(
        found.command + " " + shlex.join(doctests),
        found.source + " (doctests as tox.ini runs them)",
    )


def _pytest_setup(root: Path) -> DetectedCommand | None:
    command = "uv run pytest -q" if (root / "uv.lock").exists() else "python3 -m pytest -q"
    for name, marker in _PYTEST_SETUPS:
        if (root / name).is_file() and marker in _read(root / name):
            return DetectedCommand(command, name)
    tests = root / "tests"
    if tests.is_dir() and any(
        p.name.startswith("test_") and p.name.endswith(".py") for p in tests.iterdir()
    ):
        return DetectedCommand(command, "test files in tests/")
    return None


def tox_doctest_arguments(root: Path) -> list[str]:
    """The doctest options (and the folders they need) of tox.ini's pytest command, when it
    runs doctests: ``pytest --doctest-modules src tests`` gives all three; else nothing."""
    tox = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        tox.read_string(_read(root / "tox.ini"))
    except configparser.Error:
        return []
    if not tox.has_option("testenv", "commands"):
        return []
    for line in tox.get("testenv", "commands").splitlines():
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        starts = [
            i for i, w in enumerate(words) if w in ("pytest", "py.test") or w.endswith("/pytest")
        ]
        if not starts and "pytest" in words:
            starts = [words.index("pytest")]
        if not starts:
            continue
        found = _doctest_words(root, words[starts[0] + 1 :])
        if found:
            return found
    return []


def _doctest_words(root: Path, words: list[str]) -> list[str]:
    doctest, paths = [], []
    pending_value = False
    for word in words:
        if pending_value:
            doctest.append(word)
            pending_value = False
        elif word.startswith("--doctest"):
            doctest.append(word)
            pending_value = word == "--doctest-glob"
        elif not word.startswith("-") and "{" not in word and _inside(root, word):
            paths.append(word)
    return [*doctest, *paths] if doctest else []


def _inside(root: Path, name: str) -> bool:
    path = (root / name).resolve()
    return path.exists() and path.is_relative_to(root.resolve())


def detect_test_command(root: str | os.PathLike[str]) -> DetectedCommand | None:
    """The test command for the project in ``root``, and where it came from; None if unknown."""
    root = Path(root)
    found = _package_json_test(root) or _pytest(root)
    if found:
        return found
    if (root / "go.mod").is_file():
        return DetectedCommand("go test ./...", "go.mod")
    if (root / "Cargo.toml").is_file():
        return DetectedCommand("cargo test", "Cargo.toml")
    if _MAKE_TEST_TARGET.search(_read(root / "Makefile")):
        return DetectedCommand("make test", "Makefile test target")
    return None
