"""What a Python project's files say its tests need."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.mining import pymanifests


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_requirements_folder_is_a_manifest_and_gives_its_test_files(tmp_path: Path) -> None:
    names = ("docs.txt", "tests.in", "tests.txt", "typing.txt", "notes.md")
    files = {"requirements.txt": "x\n", **{f"requirements/{n}": "y\n" for n in names}}
    root = write(tmp_path, files)
    found = pymanifests.python_manifests(root)
    assert "requirements/notes.md" not in found and "requirements/tests.in" in found
    # pip installs the top-level file and the compiled tests file; docs and typing are not built
    assert pymanifests.requirements_files(found) == ["requirements.txt", "requirements/tests.txt"]
    (root / "requirements" / "tests.txt").unlink()
    write(root, {"requirements/dev.txt": "z\n"})
    found = pymanifests.python_manifests(root)
    assert pymanifests.requirements_files(found) == ["requirements.txt", "requirements/dev.txt"]


TOX = """\
[tox]
envlist = py38,style

[testenv]
deps =
    pytest>=6  # the runner
    freezegun
    py38: mock
    {py38,py39}: typing-extensions
    !py27: six
    -r{toxinidir}/requirements-test.txt
    -r requirements.txt
    --requirement=../outside.txt
    -c constraints.txt
    -e .
    .[tests]
    {[base]deps}
    git+https://example.invalid/pkg.git
commands = pytest

[testenv:style]
deps = pre-commit
"""


def test_tox_deps_give_the_test_environments_dependencies_only(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("evil\n")
    root = write(
        tmp_path / "p",
        {
            "tox.ini": TOX,
            "requirements.txt": "a\n",
            "requirements-test.txt": "b\n",
            "constraints.txt": "c\n",
        },
    )
    assert "tox.ini" in pymanifests.python_manifests(root)
    keyed = pymanifests.manifest_bytes(root, "tox.ini")
    (root / "tox.ini").write_text(TOX + "\n[flake8]\nmax-line-length = 99\n")
    assert pymanifests.manifest_bytes(root, "tox.ini") == keyed  # tools' settings do not count
    assert pymanifests.tox_requirements(root, installed=["requirements.txt"]) == [
        "pytest>=6",
        "freezegun",
        "-r",
        "requirements-test.txt",
        "-c",
        "constraints.txt",
        "git+https://example.invalid/pkg.git",
    ]


def test_a_tox_ini_without_deps_or_unreadable_gives_nothing(tmp_path: Path) -> None:
    root = write(tmp_path, {"tox.ini": "[testenv]\ncommands = pytest\n"})
    assert pymanifests.tox_requirements(root, installed=[]) == []
    assert pymanifests.python_manifests(root) == []  # it does not decide the environment
    (root / "tox.ini").write_text("[testenv\ndeps = x\n")
    assert pymanifests.tox_requirements(root, installed=[]) == []
    (root / "tox.ini").unlink()
    assert pymanifests.tox_requirements(root, installed=[]) == []


def test_dev_extras_and_groups_only_when_no_test_one_exists(tmp_path: Path) -> None:
    # itsdangerous: a tests group and a dev group that brings tox, pre-commit and type checkers.
    both = write(tmp_path / "both", {"pyproject.toml": (
        '[project]\nname = "x"\n[project.optional-dependencies]\ndev = ["tox"]\nTesting = []\n'
        '[dependency-groups]\ndev = ["pre-commit"]\ntests = ["pytest"]\ndocs = ["sphinx"]\n'
    )})  # fmt: skip
    assert pymanifests.test_extras(both) == ["Testing"]
    assert pymanifests.test_groups(both) == ["tests"]
    dev_only = write(tmp_path / "dev-only", {"pyproject.toml": (
        '[project]\nname = "x"\n[project.optional-dependencies]\ndev = ["pytest"]\n'
        '[dependency-groups]\ndev = ["pytest"]\n'
    )})  # fmt: skip
    assert pymanifests.test_extras(dev_only) == ["dev"]
    assert pymanifests.test_groups(dev_only) == ["dev"]


PYJWT_LIKE = """\
[project]
name = "jwtlike"
[project.optional-dependencies]
crypto = ["cryptolib"]
docs = ["sphinx"]
dev = ["jwtlike[crypto,docs,tests]", "pre-commit"]
tests = ["pytest"]
[dependency-groups]
test = ["clocklib", {include-group = "base"}]
Base = ["coverage"]
lint = ["ruff"]
"""


def test_every_extra_and_group_the_tests_may_need_is_chosen(tmp_path: Path) -> None:
    root = write(tmp_path, {"pyproject.toml": PYJWT_LIKE})
    # An optional backend is what its tests need; docs, linters and the union are not.
    assert pymanifests.default_extras(root) == ["crypto", "tests"]
    assert pymanifests.default_groups(root) == ["Base", "test"]
    assert pymanifests.group_requirements(root, ["test"]) == ["clocklib", "coverage"]
    assert pymanifests.group_requirements(root, ["missing"]) == []


def test_tox_and_nox_name_the_extras_their_test_environments_install(tmp_path: Path) -> None:
    root = write(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\n[project.optional-dependencies]\ndocs = []\n'
                          'dev = []\n',
        "tox.ini": "[testenv]\nextras =\n    docs\n    py38: dev\ndependency_groups = test\n",
    })  # fmt: skip
    assert pymanifests.default_extras(root) == ["docs"]  # tox says so, though docs is a tool's
    assert pymanifests.tox_groups(root) == ["test"]
    assert "tox.ini" in pymanifests.python_manifests(root)
    write(root, {"noxfile.py": 'def tests(session):\n    session.install("-e", ".[dev, docs]")\n'})
    assert pymanifests.nox_extras(root) == ["dev", "docs"]
    assert "noxfile.py" in pymanifests.python_manifests(root)
    assert pymanifests.manifest_bytes(root, "noxfile.py") == b"dev\ndocs"


def test_a_project_with_only_union_extras_gets_dev(tmp_path: Path) -> None:
    root = write(tmp_path, {"pyproject.toml": (
        '[project]\nname = "x"\n[project.optional-dependencies]\nall = []\ndev = []\ndocs = []\n'
    )})  # fmt: skip
    assert pymanifests.default_extras(root) == ["dev"]
