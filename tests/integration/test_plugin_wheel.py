"""A plugin from an installed wheel: its harness and its grader kind, found through entry points,
run a suite end to end; its harness with an unknown option is refused in one line; leaving it
out with HARNESSDRIVE_PLUGINS makes its harness unknown; two plugins claiming a name are refused.

The wheel is built here and installed with pip into a scratch virtual environment that sees the
test environment's packages (harnessdrive among them) but not the other way round.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest
import tomli_w

from harnessdrive.tasks.identity import harnessdrive_version
from harnessdrive.testing.suites import TaskFiles, write_suite
from harnessdrive.testing.wheels import make_wheel, wheel_name
from tests.conftest import add_task
from tests.trial_results import trial_folder

PLUGIN = textwrap.dedent(
    '''
    """A harness that writes one file, and a grader kind that compares one file."""

    from __future__ import annotations

    from collections.abc import Iterator
    from contextlib import contextmanager
    from typing import Literal

    from pydantic import Field

    from harnessdrive.grading.kinds.base import GradingCopy, RunWatch
    from harnessdrive.grading.verdict import Verdict
    from harnessdrive.harnesses.base import AgentRequest, AgentRun, HarnessInfo
    from harnessdrive.harnesses.entry import HarnessEntry
    from harnessdrive.harnesses.options import HarnessOptions, parse_options
    from harnessdrive.plugins.hookspecs import hookimpl
    from harnessdrive.tasks.models import GradeSpec, VariantSpec


    class ScribeOptions(HarnessOptions):
        text: str
        """What to write."""
        path: str = "answer.txt"
        """Where, in the workspace."""
        repeat: int = Field(default=1, ge=1)
        """How many times."""


    class Scribe:
        name = "scribe"

        def info(self) -> HarnessInfo:
            return HarnessInfo(name=self.name, installed=True, version="1.0", detail="writes")

        def check_variant(self, variant: VariantSpec) -> None:
            parse_options(ScribeOptions, variant, self.name)

        def run(self, request: AgentRequest) -> AgentRun:
            options = parse_options(ScribeOptions, request.variant, self.name)
            request.logs.mkdir(parents=True, exist_ok=True)
            (request.workspace / options.path).write_text(options.text * options.repeat)
            # What the task's grader kind handed this run (its hook around the agent's run).
            token = request.services.get("FILE_EQUALS_TOKEN", "none")
            (request.workspace / "token.txt").write_text(token)
            return AgentRun(exit_code=0, timed_out=False, seconds=0.0)


    class FileEqualsSpec(GradeSpec):
        kind: Literal["file-equals"] = "file-equals"
        """Compare one file of the change with the expected text."""
        path: str
        """The file."""
        expected: str
        """Its expected text."""


    class FileEquals:
        name = "file-equals"
        spec_model = FileEqualsSpec

        def grade(self, copy: GradingCopy, spec: FileEqualsSpec) -> Verdict:
            target = copy.root / spec.path
            found = target.read_text() if target.is_file() else ""
            same = found == spec.expected
            token = copy.root / "token.txt"
            return Verdict(
                outcome="pass" if same else "fail",
                score=1.0 if same else 0.0,
                metrics={"length": float(len(found))},
                details={
                    "found": found,
                    "token": token.read_text() if token.is_file() else None,
                },
            )

        @contextmanager
        def around_agent_run(self, task: object, sandbox: object) -> Iterator[RunWatch]:
            yield RunWatch(env={"FILE_EQUALS_TOKEN": "handed-during-the-run"})


    @hookimpl
    def harnessdrive_harnesses() -> list[HarnessEntry]:
        return [HarnessEntry("scribe", Scribe, ScribeOptions)]


    @hookimpl
    def harnessdrive_grader_kinds() -> list[FileEquals]:
        return [FileEquals()]
    '''
)
CLAIMS_NOOP = textwrap.dedent(
    """
    from harnessdrive.harnesses.entry import HarnessEntry
    from harnessdrive.plugins.hookspecs import hookimpl
    from scribe_plugin import Scribe


    @hookimpl
    def harnessdrive_harnesses():
        return [HarnessEntry("noop", Scribe)]
    """
)
VERSION = harnessdrive_version()
pytestmark = pytest.mark.slow  # each step starts harnessdrive in a fresh interpreter

ENTRY_POINTS = "[harnessdrive]\nscribe = scribe_plugin\nclaims-noop = scribe_plugin.claims_noop\n"


@pytest.fixture(scope="module")
def plugin_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interpreter of a scratch environment with the plugin wheel installed."""
    root = tmp_path_factory.mktemp("plugin-env")
    wheel = root / wheel_name("scribe_plugin", "1.0")
    wheel.write_bytes(
        make_wheel(
            "scribe_plugin",
            "1.0",
            {
                "scribe_plugin/__init__.py": PLUGIN,
                "scribe_plugin/claims_noop.py": CLAIMS_NOOP,
                "scribe_plugin-1.0.dist-info/entry_points.txt": ENTRY_POINTS,
            },
        )
    )
    env = root / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The scratch environment sees the test environment's packages (harnessdrive, pydantic,
    # pip), processed as site folders so their own .pth files (the editable install) apply.
    shared = [path for path in site.getsitepackages() if Path(path).is_dir()]
    (Path(purelib) / "test-environment.pth").write_text(
        "".join(f"import site; site.addsitedir({path!r})\n" for path in shared)
    )
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         "--disable-pip-version-check", str(wheel)],
        check=True,
    )  # fmt: skip
    return python


def harnessdrive(
    python: Path, args: Sequence[str], *, plugins: str | None = "scribe"
) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "HARNESSDRIVE_PLUGINS"}
    if plugins is not None:
        env["HARNESSDRIVE_PLUGINS"] = plugins
    return subprocess.run(
        [str(python), "-m", "harnessdrive", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def file_task_suite(parent: Path, variants: list[dict[str, object]]) -> Path:
    suite = write_suite(parent, [add_task("answer")], name="plugged", variants=variants)
    task = suite / "tasks" / "answer" / "task.toml"
    task.write_text(
        tomli_w.dumps(
            {
                "id": "answer",
                "prompt": "Write the answer into answer.txt.",
                "repo": {"path": "repo"},
                "grade": {"kind": "file-equals", "path": "answer.txt", "expected": "42"},
            }
        )
    )
    return suite


def test_the_plugin_is_registered_with_where_it_came_from(plugin_python: Path) -> None:
    # What `harnessdrive harnesses` shows in its "From" column (the command itself also probes
    # every real CLI's version, which takes long).
    script = "import json; from harnessdrive.harnesses.registry import origins; "
    script += "print(json.dumps(origins()))"
    env = {**os.environ, "HARNESSDRIVE_PLUGINS": "scribe"}
    printed = subprocess.run(
        [plugin_python, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    origins = json.loads(printed.stdout)
    assert origins["scribe"] == "plugin scribe (scribe_plugin 1.0)"
    assert origins["noop"] == origins["claude"] == "built-in"


def test_a_suite_runs_end_to_end_on_the_plugin_harness_and_grader_kind(
    plugin_python: Path, tmp_path: Path
) -> None:
    suite = file_task_suite(
        tmp_path,
        [
            {"harness": "scribe", "name": "right", "options": {"text": "42"}},
            {"harness": "scribe", "name": "wrong", "options": {"text": "4", "repeat": 3}},
        ],
    )
    results = tmp_path / "results"
    done = harnessdrive(
        plugin_python, ["run", str(suite), "--results", str(results), "--sandbox", "none"]
    )
    assert done.returncode == 0, done.stdout + done.stderr
    right = json.loads(
        (trial_folder(results, "plugged/answer/right/r1") / "result.json").read_text()
    )
    wrong = json.loads(
        (trial_folder(results, "plugged/answer/wrong/r1") / "result.json").read_text()
    )
    assert right["outcome"] == "pass" and wrong["outcome"] == "fail"
    graded = right["rounds"][-1]["grading"]
    assert graded["grader"]["kind"] == "file-equals"
    assert graded["grader"]["args"] == {"path": "answer.txt", "expected": "42"}
    assert graded["score"] == 1.0 and wrong["rounds"][-1]["grading"]["score"] == 0.0
    assert wrong["rounds"][-1]["grading"]["metrics"] == {"length": 3.0}
    assert right["harness"] == "scribe" and right["variant"]["options"] == {"text": "42"}
    # The kind acted during the agent's run, and its own data is carried as details, with
    # the distributions that supplied each part of the trial.
    assert graded["details"] == {"found": "42", "token": "handed-during-the-run"}
    assert right["protocol"] == "single"
    assert right["plugins"] == {
        "harness": {"name": "scribe", "distribution": "scribe_plugin", "version": "1.0"},
        "grader_kind": {"name": "file-equals", "distribution": "scribe_plugin", "version": "1.0"},
        "protocol": {"name": "single", "distribution": "harnessdrive", "version": VERSION},
    }
    shown = harnessdrive(
        plugin_python, ["show", "answer/right/r1", "--results", str(results), "--json"]
    )
    view = json.loads(shown.stdout)
    assert view["details"] == graded["details"] and view["protocol"] == "single"
    text = harnessdrive(plugin_python, ["show", "answer/right/r1", "--results", str(results)])
    assert "supplied by harness scribe: scribe_plugin 1.0" in text.stdout
    assert "handed-during-the-run" in text.stdout
    report = harnessdrive(plugin_python, ["report", "--results", str(results), "--format", "json"])
    details = {d["trial_id"].split("/")[-2]: d for d in json.loads(report.stdout)["details"]}
    assert details["right"]["kind_details"] == graded["details"]
    assert details["wrong"]["kind_details"]["found"] == "444"


def test_the_plugin_harness_refuses_an_unknown_option_in_one_line(
    plugin_python: Path, tmp_path: Path
) -> None:
    suite = file_task_suite(tmp_path, [{"harness": "scribe", "options": {"txt": "42"}}])
    results = tmp_path / "results"
    refused = harnessdrive(plugin_python, ["run", str(suite), "--results", str(results)])
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "error: variant scribe: unknown option(s) for scribe: txt (did you mean 'text'?) "
        "(known: path, repeat, text)"
    ]
    assert not results.exists()
    ill_typed = file_task_suite(
        tmp_path / "typed", [{"harness": "scribe", "options": {"text": "42", "repeat": 0}}]
    )
    refused = harnessdrive(plugin_python, ["run", str(ill_typed), "--results", str(results)])
    assert refused.returncode == 2
    [line] = refused.stderr.strip().splitlines()
    assert (
        line.startswith("error: variant scribe: 'repeat'") and "greater than or equal to 1" in line
    )


def test_the_plugin_options_reach_the_suite_schema(plugin_python: Path) -> None:
    printed = harnessdrive(plugin_python, ["schema", "suite"])
    assert printed.returncode == 0, printed.stderr
    definitions = json.loads(printed.stdout)["$defs"]
    assert set(definitions["scribe.options"]["properties"]) == {"text", "path", "repeat"}
    assert definitions["scribe.options"]["required"] == ["text"]
    assert not harnessdrive(plugin_python, ["schema", "suite"], plugins="").stdout.count("scribe")


def test_leaving_the_plugin_out_makes_its_harness_unknown(
    plugin_python: Path, tmp_path: Path
) -> None:
    suite = write_suite(tmp_path, [TaskFiles("t", files={"a.txt": "a"})], name="plain")
    for plugins in ("", "someone-else"):
        refused = harnessdrive(
            plugin_python,
            ["run", str(suite), "-H", "scribe", "--results", str(tmp_path / "r")],
            plugins=plugins,
        )
        assert refused.returncode == 2, refused.stderr
        [line] = refused.stderr.strip().splitlines()
        assert line.startswith("error: unknown harness 'scribe'"), line


def test_two_plugins_claiming_one_name_are_refused_in_one_line(plugin_python: Path) -> None:
    refused = harnessdrive(plugin_python, ["harnesses"], plugins=None)  # every plugin loads
    assert refused.returncode == 2
    [line] = refused.stderr.strip().splitlines()
    assert "'noop' is registered twice" in line and "claims-noop" in line
