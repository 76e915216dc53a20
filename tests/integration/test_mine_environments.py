"""Acceptance: a pyjwt-like project whose tests need an extra and a dependency group.

The project declares an optional backend (``crypto``: its tests skip without it), a docs extra
(never installed) and a ``test`` dependency group. Its dependencies are wheels in a folder pip
reads with ``PIP_FIND_LINKS`` and no index, so nothing here needs the network. Mining installs
the extra and the group by default and keeps both commits; with ``--extras tests`` the HEAD
report names the skipped tests and their reason, and the backend's commit is rejected.
"""

from __future__ import annotations

import functools
import http.server
import importlib.metadata
import json
import os
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.sandbox.runner import sandbox_problem
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.testing.wheels import WHEEL_WRITER, make_wheel, wheel_name

pytestmark = pytest.mark.slow  # builds environments and mines a history twice

TEST_COMMAND = ".venv/bin/python -m pytest -q -p no:cacheprovider tests"
# pytest and what it imports on this interpreter, in one wheel: pip installs it from the folder.
PYTEST_PARTS = ("pytest", "pluggy", "iniconfig", "packaging", "pygments", "exceptiongroup", "tomli")

BACKEND = (
    WHEEL_WRITER
    + """
# A build backend in the tree: an editable wheel whose metadata names the extras.
import tomllib


def _metadata():
    with open("pyproject.toml", "rb") as handle:
        project = tomllib.load(handle)["project"]
    lines = [f"Metadata-Version: 2.1", f"Name: {project['name']}", "Version: 1.0"]
    for extra, wanted in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {w}; extra == "{extra}"' for w in wanted]
    return project["name"], "\\n".join(lines) + "\\n"


def get_requires_for_build_editable(config_settings=None):
    return []


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name, metadata = _metadata()
    files = {f"_{name}.pth": os.path.abspath("src") + "\\n"}
    return write_wheel(wheel_directory, name, "1.0", files, metadata)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise NotImplementedError
"""
)
PYPROJECT = """\
[build-system]
requires = []
build-backend = "backend"
backend-path = ["_backend"]

[project]
name = "jwtlike"
version = "1.0"

[project.optional-dependencies]
crypto = ["cryptolib"]
docs = ["sphinx-is-not-in-the-folder"]
tests = []

[dependency-groups]
test = ["clocklib"]
"""
CRYPTO = "def sign(data):\n    return 'unsigned:' + data\n"
CLOCK = "import clocklib\n\n\ndef expired(at):\n    return at > clocklib.NOW\n"
# As pyjwt does: the backend's tests are marked to skip without it.
CRYPTO_REQUIRED = """\
import pytest

try:
    import cryptolib
except ImportError:
    cryptolib = None
pytestmark = pytest.mark.skipif(cryptolib is None, reason="could not import 'cryptolib'")
from jwtlike import crypto
"""
CRYPTO_TESTS = (
    CRYPTO_REQUIRED
    + """\


@pytest.mark.parametrize("n", range(4))
def test_sign_is_text(n):
    assert isinstance(crypto.sign("x" * n), str)
"""
)
CLOCK_TESTS = """\
from jwtlike import clock


def test_the_past_is_not_expired():
    assert not clock.expired(0)
"""


def pytest_wheel() -> bytes:
    files: dict[str, bytes] = {}
    for part in PYTEST_PARTS:
        try:
            dist = importlib.metadata.distribution(part)
        except importlib.metadata.PackageNotFoundError:
            continue
        for path in dist.files or ():
            text = str(path)
            if ".dist-info" in text or "__pycache__" in text or text.startswith(".."):
                continue
            files[text] = Path(str(dist.locate_file(path))).read_bytes()
    return make_wheel("pytest", importlib.metadata.version("pytest"), files)


def build_project(path: Path) -> dict[str, str]:
    repo = RepoBuilder(path)
    repo.commit(
        "Start jwtlike",
        {
            "pyproject.toml": PYPROJECT,
            "_backend/backend.py": BACKEND,
            "src/jwtlike/__init__.py": "",
            "src/jwtlike/crypto.py": CRYPTO,
            "src/jwtlike/clock.py": CLOCK,
            "tests/test_crypto.py": CRYPTO_TESTS,
            "tests/test_clock.py": CLOCK_TESTS,
        },
    )
    sha = {
        "crypto": repo.commit(
            "Sign with the key",
            {
                "src/jwtlike/crypto.py": CRYPTO.replace(
                    "return 'unsigned:' + data",
                    "import cryptolib\n\n    return cryptolib.sign(data)",
                ),
                "tests/test_crypto_sign.py": CRYPTO_REQUIRED
                + "\n\ndef test_signed():\n    assert crypto.sign('a') == 'signed:a'\n",
            },
        ),
        "clock": repo.commit(
            "Tokens expire at the boundary",
            {
                "src/jwtlike/clock.py": CLOCK.replace("at > clocklib.NOW", "at >= clocklib.NOW"),
                "tests/test_clock_boundary.py": (
                    "import clocklib\nfrom jwtlike import clock\n\n\n"
                    "def test_boundary():\n    assert clock.expired(clocklib.NOW)\n"
                ),
            },
        ),
    }
    repo.checkout()
    repo.close()
    return sha


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], Path]:
    root = tmp_path_factory.mktemp("jwtlike")
    wheels = root / "wheels"
    wheels.mkdir()
    (wheels / wheel_name("pytest", importlib.metadata.version("pytest"))).write_bytes(
        pytest_wheel()
    )
    signing = {"cryptolib/__init__.py": "def sign(data):\n    return 'signed:' + data\n"}
    (wheels / wheel_name("cryptolib", "1.0")).write_bytes(make_wheel("cryptolib", "1.0", signing))
    clock = {"clocklib/__init__.py": "NOW = 100\n"}
    (wheels / wheel_name("clocklib", "1.0")).write_bytes(make_wheel("clocklib", "1.0", clock))
    sha = build_project(root / "jwtlike")
    return root / "jwtlike", sha, wheels


def mine(repo: Path, wheels: Path, output: Path, *extra: str) -> tuple[dict[str, Any], str]:
    argv = [
        "mine", str(repo), "--since", "2000-01-01", "--validate", "--test-cmd", TEST_COMMAND,
        "--test-timeout", "60", "--json", "--sandbox", "none", "-o", str(output), *extra,
    ]  # fmt: skip
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
    result = subprocess.run(
        [sys.executable, "-m", "harnessdrive", *argv],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def test_the_extra_and_the_group_the_tests_need_are_installed(
    project: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    repo, sha, wheels = project
    summary, _ = mine(repo, wheels, tmp_path / "suite")
    assert [t["commit"] for t in summary["tasks"]] == [sha["clock"], sha["crypto"]]
    assert summary["environments"]["extras"] == ["crypto", "tests"]  # never docs
    assert summary["environments"]["groups"] == ["test"]
    assert summary["head_skips"]["skipped"] == 0


def test_without_the_extra_the_head_report_names_the_skipped_tests(
    project: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    repo, sha, wheels = project
    summary, _ = mine(repo, wheels, tmp_path / "suite", "--extras", "tests")
    skips = summary["head_skips"]
    assert (skips["skipped"], skips["total"], skips["many"]) == (5, 7, True)
    ((reason,),) = [skips["reasons"]]
    assert (reason["reason"], reason["tests"], len(reason["names"])) == (
        "cryptolib not installed",
        5,
        5,
    )
    markdown = (tmp_path / "suite" / "summary.md").read_text()
    said = "**Warning:** At HEAD 5 of 7 tests are skipped: cryptolib not installed (5: "
    assert said + reason["names"][0] in markdown
    # The backend's commit cannot be judged without its backend: its tests only skip.
    assert [t["commit"] for t in summary["tasks"]] == [sha["clock"]]
    rejected = {t["commit"]: t["detail"] for t in summary["rejected_tasks"]}
    assert list(rejected) == [sha["crypto"]]
    assert "5 skipped" in rejected[sha["crypto"]]


GREET_TEST = (
    "import unittest\n\nimport greet\nimport shout\n\n\nclass Shout(unittest.TestCase):\n"
    "    def test_it(self):\n        self.assertEqual(shout.shout(), greet.hello().upper())\n"
)


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A package index on 127.0.0.1: a served folder of wheels pip reads with --find-links."""
    folder = tmp_path_factory.mktemp("index")
    greet = {"greet/__init__.py": "def hello():\n    return 'hi'\n"}
    (folder / wheel_name("greet", "1.0")).write_bytes(make_wheel("greet", "1.0", greet))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(sandbox_problem() is not None, reason="bubblewrap does not work here")
def test_a_setup_that_needs_the_registry_works_with_setup_network(
    registry: str, tmp_path: Path
) -> None:
    repo = RepoBuilder(tmp_path / "shout")
    repo.commit("Start", {"shout.py": "def shout():\n    return 'hi'\n"})
    fix = repo.commit(
        "Shout in capitals",
        {
            "shout.py": "import greet\n\n\ndef shout():\n    return greet.hello().upper()\n",
            "tests/test_shout.py": GREET_TEST,
        },
    )
    repo.checkout()
    repo.close()
    setup = (
        "{python} -m venv --without-pip .venv && {python} -m pip --python .venv/bin/python"
        f" install -q --no-index --retries 0 --timeout 5 --find-links {registry} greet"
    )
    argv = [
        sys.executable, "-m", "harnessdrive", "mine", str(tmp_path / "shout"), "--since",
        "2000-01-01", "--validate", "--setup-cmd", setup, "--test-cmd",
        ".venv/bin/python -m unittest discover -s tests -q", "--test-timeout", "60",
        "--json", "--sandbox", "bwrap", "-o", str(tmp_path / "suite"),
    ]  # fmt: skip
    offline = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert offline.returncode == 2, offline.stderr
    first_line = offline.stderr.splitlines()[0]
    assert "setup fails in a fresh copy of HEAD: the setup step `" in first_line
    assert "failed: it tried to download from a package registry" in first_line, first_line
    assert "--setup-network" in first_line
    online = subprocess.run([*argv, "--setup-network"], capture_output=True, text=True)
    assert online.returncode == 0, online.stderr
    summary = json.loads(online.stdout)
    assert [t["commit"] for t in summary["tasks"]] == [fix]
    task = tomllib.loads((tmp_path / "suite" / "tasks" / fix[:12] / "task.toml").read_text())
    assert task["setup"]["network"] == "host"  # so check and run allow it too
