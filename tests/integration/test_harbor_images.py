"""A Harbor-format dataset, imported and run end to end under bubblewrap inside OCI roots.

The images are Debian minbase roots built here (tests/images.py): one with Python and pytest,
one with Lua (which the host lacks). The five tasks: a Python bug fix graded by pytest in
test.sh, a shell script, a fractional reward.json, a task needing the image's Lua, and one whose
file name comes from the Dockerfile's ENV.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.cli.variants import resolve_variants
from harnessdrive.harbor.importer import ImportOptions, import_harbor
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, RunSummary, execute
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks import load_suite
from tests.images import image_cache, lua_image, python_image

pytestmark = pytest.mark.slow

DATASET = Path(__file__).resolve().parent.parent / "fixtures" / "harbor" / "dataset"
TASKS = {"fix-add", "count-lines", "word-stats", "lua-fib", "env-target"}


@pytest.fixture(scope="module")
def image_names() -> dict[str, str]:
    return {
        "harnessdrive-test/debian-python:1": python_image(),
        "harnessdrive-test/debian-lua:1": lua_image(),
    }


@pytest.fixture(scope="module", autouse=True)
def _image_cache_of_the_tests() -> Iterator[None]:
    # Unpacked roots go to the test cache, never the user's.
    before = os.environ.get("HARNESSDRIVE_IMAGE_CACHE")
    os.environ["HARNESSDRIVE_IMAGE_CACHE"] = str(image_cache() / "unpacked")
    yield
    if before is None:
        os.environ.pop("HARNESSDRIVE_IMAGE_CACHE", None)
    else:
        os.environ["HARNESSDRIVE_IMAGE_CACHE"] = before


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory, image_names: dict[str, str]) -> Path:
    out = tmp_path_factory.mktemp("imported") / "suite"
    report = import_harbor(DATASET, out, ImportOptions(images=image_names))
    assert report.refused == []
    assert set(report.written) == TASKS
    return out


def run(suite: Path, results: Path, names: list[str]) -> dict[tuple[str, str], TrialResult]:
    loaded = load_suite(suite)
    plan = make_plan(loaded, resolve_variants(loaded, names), 1)
    summary: RunSummary = execute(plan, RunOptions(results=results, sandbox="bwrap", jobs=2))
    return {(r.task, r.variant_label): r for r in summary.trials}


def test_reference_passes_every_task_noop_none_tamperer_caught(suite: Path, tmp_path: Path) -> None:
    results = run(suite, tmp_path / "results", ["reference", "noop", "tamperer"])
    for task in TASKS:
        reference = results[(task, "reference")]
        assert (reference.status, reference.outcome) == ("completed", "pass"), (
            task,
            reference.note,
            reference.rounds[-1].grading if reference.rounds else None,
        )
        assert results[(task, "noop")].outcome == "fail", task
        assert results[(task, "tamperer")].outcome == "tampered", task
    # The fractional task keeps its named rewards; a partial answer's score is its fraction.
    stats = results[("word-stats", "reference")]
    assert stats.score == 1.0 and stats.metrics["reward.count"] == 1.0
    assert results[("word-stats", "noop")].score == 0.0


def test_a_task_whose_dockerfile_needs_a_build_is_built_here_and_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("buildah") is None:
        if os.environ.get("CI"):
            pytest.fail("buildah not installed (scripts/test.sh installs it)")
        pytest.skip("buildah not installed")
    # The base as a user has it: in the builder's own storage, never fetched from a registry.
    layout = python_image()
    base = f"localhost/harnessdrive-test/debian-python:{layout.rsplit('-', 1)[-1][:12]}"
    subprocess.run(
        ["skopeo", "copy", "--quiet", layout, f"containers-storage:{base}"],
        check=True,
        capture_output=True,
    )
    monkeypatch.setenv("BUILDAH_ISOLATION", "chroot")  # no container runtime starts here
    folder = tmp_path / "dataset" / "built"
    for rel, text in {
        "task.toml": 'schema_version = "1.4"\n[task]\nname = "x/built"\n',
        "instruction.md": "Write the secret the image holds into answer.txt.\n",
        # A RUN step makes the file the task needs and the starting files in the work folder.
        "environment/Dockerfile": f"FROM {base}\nRUN echo s3cr3t > /opt/secret.txt\n"
        "WORKDIR /srv/app\nRUN echo 'see /opt' > /srv/app/README\n",
        "tests/test.sh": "#!/bin/bash\n"
        'if [ "$(cat answer.txt)" = "$(cat /opt/secret.txt)" ]; then r=1; else r=0; fi\n'
        "echo $r > /logs/verifier/reward.txt\n",
        "solution/solve.sh": "#!/bin/bash\ncp /opt/secret.txt answer.txt\n",
    }.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    out = tmp_path / "suite"
    report = import_harbor(tmp_path / "dataset", out, ImportOptions())
    assert (report.refused, report.written) == ([], ["built"])
    task = out / "tasks" / "built"
    assert (task / "repo" / "README").read_text() == "see /opt\n"
    assert (task / "environment" / "Dockerfile").is_file()  # built again where it runs
    results = run(out, tmp_path / "results", ["reference", "noop"])
    assert results[("built", "reference")].outcome == "pass", results[("built", "reference")]
    assert results[("built", "noop")].outcome == "fail"
