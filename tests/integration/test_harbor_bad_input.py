"""Bad Harbor input: each task that cannot run is one line naming it, the others go on, and a
reward that cannot be read is never a pass."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.cli.variants import resolve_variants
from harnessdrive.environments.oci.build import build_dockerfile
from harnessdrive.errors import ImageError
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.tasks import load_suite
from tests.images import image_cache, python_image

pytestmark = pytest.mark.slow

GOOD_TEST = (
    "#!/bin/bash\n"
    "[ -f done.txt ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"
)
SOLVE = "#!/bin/bash\necho yes > done.txt\n"


def task(root: Path, name: str, toml: str, *, instruction: bool = True, test: str = GOOD_TEST,
         files: dict[str, str] | None = None) -> None:  # fmt: skip
    folder = root / name
    (folder / "tests").mkdir(parents=True)
    (folder / "solution").mkdir()
    (folder / "task.toml").write_text(f'schema_version = "1.4"\n[task]\nname = "x/{name}"\n{toml}')
    if instruction:
        (folder / "instruction.md").write_text("Create done.txt.\n")
    (folder / "tests" / "test.sh").write_text(test)
    (folder / "solution" / "solve.sh").write_text(SOLVE)
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)


@pytest.fixture(autouse=True)
def _test_image_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HARNESSDRIVE_IMAGE_CACHE", str(image_cache() / "unpacked"))
    yield


def test_each_bad_task_is_one_line_and_the_rest_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image = python_image()
    data = tmp_path / "dataset"
    plain_env = '[environment]\ndocker_image = "img"\nworkdir = "/app"\n'
    task(data, "good", plain_env)
    task(data, "bad-reward", plain_env, test="#!/bin/bash\necho abc > /logs/verifier/reward.txt\n")
    task(data, "no-reward", plain_env, test="#!/bin/bash\ntrue\n")
    task(data, "gpu", '[environment]\ndocker_image = "img"\ngpus = 1\n')
    task(data, "compose", plain_env, files={"environment/docker-compose.yaml": "services: {}\n"})
    task(data, "no-instruction", plain_env, instruction=False)
    task(data, "lost-image", '[environment]\ndocker_image = "oci:./nowhere"\n')
    task(data, "needs-build", "", files={"environment/Dockerfile": "FROM img\nRUN make\n"})
    task(data, "bad-toml", "[environment\n")
    out = tmp_path / "suite"
    code = run_cli(["import", "harbor", str(data), "--out", str(out), "--image", f"img={image}"])
    err = capsys.readouterr().err
    assert code == 0
    lines = [line for line in err.splitlines() if line.strip()]
    expected = {
        "gpu": "GPUs",
        "compose": "docker-compose",
        "no-instruction": "instruction.md",
        "lost-image": "nowhere",
        "needs-build": "its Dockerfile needs a build (it runs RUN steps): ",
        "bad-toml": "task.toml",
    }
    assert len(lines) == len(expected), lines
    for name, reason in expected.items():
        [line] = [x for x in lines if f"task {name}:" in x]
        assert reason in line, line
    assert "Traceback" not in err

    loaded = load_suite(out)
    assert sorted(t.id for t in loaded.tasks) == ["bad-reward", "good", "no-reward"]
    plan = make_plan(loaded, resolve_variants(loaded, ["reference"]), 1)
    summary = execute(plan, RunOptions(results=tmp_path / "results", sandbox="bwrap"))
    results = {r.task: r for r in summary.trials}
    assert results["good"].outcome == "pass"
    for name in ("bad-reward", "no-reward"):
        assert results[name].outcome == "not_graded", results[name]
        grading = results[name].rounds[-1].grading
        assert grading is not None and "reward" in (grading.error or ""), grading


def test_a_harbor_dockerfile_without_a_builder_here_is_one_line_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "dataset"
    task(data, "needs-build", "", files={"environment/Dockerfile": "FROM img\nRUN make\n"})
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    # Its only task cannot be imported: nothing is, so the command fails.
    assert run_cli(["import", "harbor", str(data), "--out", str(tmp_path / "suite")]) == 2
    line = capsys.readouterr().err.strip().splitlines()[0]
    assert line.startswith("skipped task needs-build: its Dockerfile needs a build (it runs RUN")
    assert "apt-get install buildah" in line


def test_a_dockerfile_without_a_builder_is_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "Dockerfile").write_text("FROM scratch\nRUN true\n")
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    with pytest.raises(ImageError, match="apt-get install buildah"):
        build_dockerfile(tmp_path / "Dockerfile", f"oci:{tmp_path / 'layout'}:x")


def test_a_harbor_folder_runs_directly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # the imported suite's home
    data = tmp_path / "dataset"
    task(data, "good", f'[environment]\ndocker_image = "{python_image()}"\nworkdir = "/app"\n')
    task(data, "gpu", '[environment]\ndocker_image = "img"\ngpus = 2\n')
    results = tmp_path / "results"
    argv = ["run", str(data), "--harness", "reference,noop", "--results", str(results)]
    assert run_cli([*argv, "--sandbox", "bwrap"]) == 0
    err = capsys.readouterr().err
    assert "task gpu: not supported: it asks for GPUs" in err
    outcomes = {
        (r.parent.parent.name, r.parent.parent.parent.name): r.read_text()
        for r in results.glob("trials/*/*/*/r1/result.json")
    }
    assert len(outcomes) == 2
    for (variant, name), text in outcomes.items():
        assert name == "good"
        assert ('"outcome": "pass"' in text) == (variant == "reference"), (variant, text[:300])
