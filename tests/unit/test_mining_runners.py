"""The runner table and the ``restored`` globs a mined task gets from it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from harnessdrive.grading.copying import _split
from harnessdrive.mining.classify import TEST_GLOBS, classify_path
from harnessdrive.mining.runners import (
    LANGUAGE_EXTENSIONS,
    RUNNERS,
    Runner,
    all_runner_globs,
    is_runner_settings,
    select_runners,
)
from harnessdrive.mining.taskfiles import render_task_toml, restore_groups
from harnessdrive.tasks.globs import matches
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.workspace.changes import Changes, FileChange

# The extensions a test runner's own settings files are written in.
CONFIG_EXTENSIONS = {
    "js", "cjs", "mjs", "ts", "cts", "mts", "coffee", "json", "jsonc", "yaml", "yml",
    "ini", "toml", "py", "xml", "dist", "config", "runsettings", "xctestplan",
}  # fmt: skip
JS_RUNNERS = {r.name for r in RUNNERS if r.language == "javascript"}
PYTHON_RUNNERS = {r.name for r in RUNNERS if r.language == "python"}


def _runner(name: str) -> Runner:
    return next(r for r in RUNNERS if r.name == name)


@pytest.mark.parametrize(
    ("runner", "name"),
    [
        ("pytest", "pytest.ini"),
        ("pytest", "conftest.py"),
        ("tox", "tox.ini"),
        ("nox", "noxfile.py"),
        ("jest", "jest.config.js"),
        ("jest", "jest.config.ts"),
        ("vitest", "vitest.config.ts"),
        ("vitest", "vitest.config.mts"),
        ("mocha", ".mocharc.yml"),
        ("mocha", ".mocharc.cjs"),
        ("karma", "karma.conf.js"),
        ("ava", "ava.config.mjs"),
        ("playwright", "playwright.config.ts"),
        ("phpunit", "phpunit.xml.dist"),
        ("rspec", ".rspec"),
        ("maven", ".mvn/maven.config"),
        ("cargo-test", "**/.cargo/config.toml"),
    ],
)
def test_known_settings_files_are_in_the_table(runner: str, name: str) -> None:
    assert name in _runner(runner).settings


@pytest.mark.parametrize(
    "name",
    [
        "jest.conf.jsxon",
        "vitest.conf.ctsxon",
        "karma.config.tson",
        "jest.config.mjsx",
        "vitest.config.json",  # vitest reads no JSON config
        ".mocharc",  # mocha reads no extensionless rc file
        "app.test.ctsx",
    ],
)
def test_invented_names_are_neither_restored_nor_tests(name: str) -> None:
    assert not matches(name, all_runner_globs())
    assert classify_path(name) != "test"


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda r: r.name)
def test_every_settings_entry_is_a_well_formed_file_name(runner: Runner) -> None:
    for entry in runner.settings + runner.markers:
        name = entry.rsplit("/", 1)[-1]
        assert re.fullmatch(r"\*?\.?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*", name), entry
        extension = name.rsplit(".", 1)[-1] if "." in name.lstrip(".") else None
        assert extension is None or extension in CONFIG_EXTENSIONS, entry
        tool = re.fullmatch(r"([a-z]+)\.conf(?:ig)?\.\w+", name)
        if tool:  # "<tool>.config.<ext>" names the runner it belongs to
            assert tool.group(1) == runner.name, entry


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda r: r.name)
def test_test_file_conventions_use_their_languages_extensions(runner: Runner) -> None:
    extensions = LANGUAGE_EXTENSIONS[runner.language]
    for glob in runner.test_files:
        assert "/" not in glob and any(glob.endswith(ext) for ext in extensions), glob


def test_no_glob_is_listed_twice_in_the_classifier() -> None:
    assert len(TEST_GLOBS) == len(set(TEST_GLOBS))


def test_a_python_only_repository_gets_only_python_runners() -> None:
    paths = ["pkg/__init__.py", "pkg/core.py", "tests/test_core.py", "README.md"]
    chosen = {r.name for r in select_runners(paths, test_command="python -m pytest -q")}
    assert chosen == {"pytest", "unittest"}


def test_a_python_repository_with_tox_gets_tox_too() -> None:
    paths = ["pkg/core.py", "tox.ini"]
    chosen = {r.name for r in select_runners(paths, test_command="python -m pytest")}
    assert chosen == {"pytest", "unittest", "tox"}


def test_a_javascript_repository_gets_the_runner_its_manifest_names() -> None:
    manifest = '{"scripts": {"test": "vitest run"}, "devDependencies": {"vitest": "^2.0.0"}}'
    chosen = {
        r.name
        for r in select_runners(
            ["src/index.ts", "package.json"], test_command="npm test", manifests=[manifest]
        )
    }
    assert chosen == {"vitest"}


def test_a_javascript_repository_without_a_sign_keeps_every_javascript_runner() -> None:
    chosen = {r.name for r in select_runners(["index.js"], test_command="make check")}
    assert chosen == JS_RUNNERS


def test_a_settings_file_in_the_tree_is_a_sign() -> None:
    chosen = {r.name for r in select_runners(["lib/a.js", "karma.conf.js"], test_command="npm t")}
    assert chosen == {"karma"}


def test_a_scoped_package_name_is_a_sign() -> None:
    manifest = '{"devDependencies": {"@playwright/test": "1.48.0"}}'
    chosen = select_runners(["e2e/a.ts"], test_command="npm test", manifests=[manifest])
    assert {r.name for r in chosen} == {"playwright"}


@pytest.fixture
def python_repo(tmp_path: Path) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "py")
    repo.commit(
        "start",
        files={
            "calc/__init__.py": "",
            "calc/ops.py": "def add(a, b):\n    return a + b\n",
            "tests/test_ops.py": "from calc.ops import add\n",
            "pyproject.toml": "[project]\nname = 'calc'\n",
        },
    )
    return repo


def test_restore_groups_of_a_python_repository(python_repo: RepoBuilder) -> None:
    groups = dict(restore_groups(python_repo.path, python_repo.tip(), "python -m pytest -q"))
    assert list(groups) == ["test folders", "pytest"]
    restored = [glob for globs in groups.values() for glob in globs]
    assert "conftest.py" in restored and "test_*.py" in restored
    foreign = re.compile(r"jest|vitest|mocha|karma|\.js|\.ts|_test\.go|\.rb|\.java")
    assert not any(foreign.search(glob) for glob in restored)


def test_restore_groups_of_a_jest_repository(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "js")
    repo.commit(
        "start",
        files={
            "package.json": '{"scripts": {"test": "jest"}, "devDependencies": {"jest": "29"}}',
            "src/sum.js": "module.exports = (a, b) => a + b;\n",
            "src/sum.test.js": "test('adds', () => {});\n",
        },
    )
    groups = dict(restore_groups(repo.path, repo.tip(), "npm test"))
    assert list(groups) == ["test folders", "jest"]
    assert "jest.config.js" in groups["jest"] and "?*.test.js" in groups["jest"]
    assert not any("vitest" in g or g.endswith(".py") for g in groups["jest"])


def test_the_rendered_task_file_is_commented_and_parses_back(python_repo: RepoBuilder) -> None:
    groups = restore_groups(python_repo.path, python_repo.tip(), "python -m pytest -q")
    restored = [glob for _, globs in groups for glob in globs]
    data = {
        "id": "t1",
        "prompt": "Fix it.",
        "repo": {"path": "/somewhere", "ref": "abc"},
        "grade": {"command": "pytest", "timeout": 60.0, "restored": restored, "removed": ["x"]},
        "metadata": {"mined": True, "commit": "def"},
    }
    text = render_task_toml(data, groups)
    assert tomllib.loads(text) == data
    assert "    # test folders\n" in text and "    # pytest\n" in text
    assert len(restored) < 30  # one screen, not hundreds of globs


def _example(glob: str) -> str:
    """A path that ``glob`` must match, nested one folder deep where it matches at any depth."""
    path = glob.replace("**/", "pkg/").replace("/**", "/deep/file.txt")
    path = path.replace("*", "Name").replace("?", "x")
    return path if "/" in glob else f"pkg/{path}"


@pytest.mark.parametrize("glob", TEST_GLOBS)
def test_the_grader_restores_a_path_of_every_glob(glob: str) -> None:
    path = _example(glob)
    change = FileChange(path, "modified", "100644", "100644", "0" * 40, 1, 0, False)
    changes = Changes(base_tree="a", tree="b", files=(change,), patch=b"")
    included, excluded = _split(changes, (), TEST_GLOBS, ())
    assert (included, excluded) == ([], (path,))
    assert classify_path(path) == "test"


@pytest.mark.parametrize(
    "path",
    ["tox.ini", "tests/conftest.py", ".cargo/config.toml", "crates/a/.cargo/config.toml",
     ".config/nextest.toml", ".mvn/maven.config"],
)  # fmt: skip
def test_settings_files_in_folders_of_their_own_are_settings_too(path: str) -> None:
    # A commit that changes only these and source code has no test that could fail before it.
    assert is_runner_settings(path)


@pytest.mark.parametrize("path", ["tests/test_a.py", "src/.cargo/notes.toml", "config.toml"])
def test_test_files_and_look_alikes_are_not_settings(path: str) -> None:
    assert not is_runner_settings(path)
