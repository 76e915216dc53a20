"""A mined task is checked and run under the view it was validated under (bubblewrap).

Mining builds a shared environment next to the suite, which the task's setup links into each
copy. ``check`` and ``run`` keep the suite (and so the environment) out of the sandbox's sight
unless the task's view shows it: these tests fail when any of mining, check, the agent's
sandbox, setup or grading sees something else.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.testing.wheels import make_wheel, wheel_name
from tests.sandboxes import require_bwrap

TEST_COMMAND = ".venv/bin/python -m unittest discover -s tests -q"
GREET = wheel_name("greet", "1.0")


def unit_test(body: str) -> str:
    return (
        "import unittest\n\nimport calc\n\n\nclass T(unittest.TestCase):\n"
        f"    def test_it(self):\n        {body}\n"
    )


def build_repo(path: Path) -> None:
    repo = RepoBuilder(path)
    wheel = make_wheel("greet", "1.0", {"greet/__init__.py": "def hello():\n    return 'hi'\n"})
    repo.commit(
        "Start",
        {
            "calc.py": "def shout():\n    return 'no'\n",
            f"wheels/{GREET}": wheel,
            "requirements.txt": f"./wheels/{GREET}\n",
            "tests/test_base.py": unit_test("self.assertTrue(callable(calc.shout))"),
        },
    )
    repo.commit(
        "Shout the greeting",
        {
            "calc.py": "import greet\n\n\ndef shout():\n    return greet.hello().upper()\n",
            "tests/test_shout.py": unit_test("self.assertEqual(calc.shout(), 'HI')"),
        },
    )
    repo.close()


@pytest.fixture(scope="module")
def mined_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_bwrap()
    root = tmp_path_factory.mktemp("view")
    build_repo(root / "calc")
    suite = root / "suite"
    argv = [
        "mine", str(root / "calc"), "--since", "2000-01-01", "--validate", "-o", str(suite),
        "--test-cmd", TEST_COMMAND, "--test-timeout", "60", "--sandbox", "bwrap",
    ]  # fmt: skip
    assert run_cli(argv) == 0
    return suite


def test_the_mined_task_names_its_shared_environments(mined_suite: Path) -> None:
    (task,) = (mined_suite / "tasks").iterdir()
    spec = tomllib.loads((task / "task.toml").read_text())
    assert spec["setup"]["shared"] == [str(mined_suite / "envs")]
    assert "envsetup.py link" in spec["setup"]["commands"][0]


def test_check_passes_under_bubblewrap(
    mined_suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["check", str(mined_suite), "--sandbox", "bwrap"]) == 0
    # The mined task carries its rewritten solution as a fixture, and it passes too.
    assert "The task grades correctly; the fixture agrees." in capsys.readouterr().out


def test_run_under_bubblewrap_grades_reference_pass_and_noop_fail(
    mined_suite: Path, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    # The agent sees the linked environment too: it can run the tests it was told about.
    probe = ".venv/bin/python -c 'import greet' && echo agent-saw-greet"
    argv = [
        "run", str(mined_suite), "--harness", "reference,noop", "--cmd", f"probe={probe}",
        "--results", str(results), "--sandbox", "bwrap",
    ]  # fmt: skip
    run_cli(argv)
    outcomes = {}
    assert len(list(results.glob("trials/**/result.json"))) == 3
    for result_file in results.glob("trials/**/result.json"):
        result = json.loads(result_file.read_text())
        assert result["sandbox"] == "bwrap"
        outcomes[result["variant_label"]] = (result["status"], result["outcome"])
        if result["variant_label"] == "probe":
            stdout = (result_file.parent / "agent.stdout").read_text()
            assert "agent-saw-greet" in stdout
    assert outcomes["reference"] == ("completed", "pass")
    assert outcomes["noop"][1] == "fail"
    assert outcomes["probe"] == ("completed", "fail")
