"""Reading Harbor's files: the verifier's reward (hostile data), plain Dockerfiles, and the
features a task may ask for that cannot run here."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.errors import GradingError
from harnessdrive.grading.kinds.harbor_reward import read_reward
from harnessdrive.harbor.dockerfile import PlainDockerfile, read_plain
from harnessdrive.harbor.task_file import HarborTaskFile


def test_reward_txt_is_one_number(tmp_path: Path) -> None:
    (tmp_path / "reward.txt").write_text("0.25\n")
    reward = read_reward(tmp_path)
    assert (reward.value, reward.named) == (0.25, {})


@pytest.mark.parametrize("text", ["", "abc", "nan", "inf", "1 2", "\x00"])
def test_a_reward_that_is_not_a_number_is_an_error(tmp_path: Path, text: str) -> None:
    (tmp_path / "reward.txt").write_text(text)
    with pytest.raises(GradingError):
        read_reward(tmp_path)


def test_no_reward_is_an_error_never_a_pass(tmp_path: Path) -> None:
    with pytest.raises(GradingError, match="no reward"):
        read_reward(tmp_path)


def test_a_reward_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("1\n")
    (tmp_path / "reward.txt").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(GradingError, match="not a regular file"):
        read_reward(tmp_path)


def test_an_oversized_reward_is_refused(tmp_path: Path) -> None:
    (tmp_path / "reward.txt").write_text("1" + " " * 100_000)
    with pytest.raises(GradingError):
        read_reward(tmp_path)


def test_named_rewards_keep_every_name_and_decide_by_reward(tmp_path: Path) -> None:
    (tmp_path / "reward.json").write_text('{"reward": 0.5, "style": 1, "speed": 0}')
    reward = read_reward(tmp_path)
    assert reward.value == 0.5
    assert reward.named == {"reward": 0.5, "style": 1.0, "speed": 0.0}


def test_named_rewards_without_reward_decide_by_their_mean(tmp_path: Path) -> None:
    (tmp_path / "reward.json").write_text('{"a": 1, "b": 0}')
    assert read_reward(tmp_path).value == 0.5


@pytest.mark.parametrize(
    "text", ["[1]", "{}", '{"reward": true}', '{"reward": "x"}', '{"reward": null}', "{"]
)
def test_bad_reward_json_is_an_error(tmp_path: Path, text: str) -> None:
    (tmp_path / "reward.json").write_text(text)
    with pytest.raises(GradingError):
        read_reward(tmp_path)


def test_a_plain_dockerfile_needs_no_builder(tmp_path: Path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "# a task\nFROM base/image:1 AS b\nENV A=1 B='two words'\nENV C three\n"
        'WORKDIR /app\nCOPY src/ ./lib/\nCOPY main.py /app/main.py\nCMD ["bash"]\n'
    )
    assert read_plain(dockerfile) == PlainDockerfile(
        base="base/image:1",
        workdir="/app",
        env={"A": "1", "B": "two words", "C": "three"},
        copies=(("src/", "lib"), ("main.py", "main.py")),
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("FROM a\nRUN apt-get install -y x\n", "RUN"),
        ("FROM a\nWORKDIR /app\nCOPY x /etc/x\n", "outside"),
        ("FROM a AS one\nFROM b\n", "several stages"),
        ("FROM a\nCOPY --chown=1 x y\n", "plain copy"),
        ("WORKDIR /app\n", "no base image"),
    ],
)
def test_a_dockerfile_that_needs_a_build_says_why(tmp_path: Path, text: str, reason: str) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(text)
    result = read_plain(dockerfile)
    assert isinstance(result, str) and reason in result


def test_unsupported_features_are_each_a_reason() -> None:
    task = HarborTaskFile.model_validate(
        {
            "environment": {"gpus": 1, "mcp_servers": [{"name": "x"}], "os": "windows"},
            "steps": [{"name": "a"}, {"name": "b"}],
        }
    )
    reasons = " | ".join(task.unsupported())
    for word in ("GPUs", "MCP", "windows", "several steps"):
        assert word in reasons
    assert HarborTaskFile.model_validate({"environment": {"cpus": 2}}).unsupported() == []


def test_setup_is_reused_only_within_one_image(tmp_path: Path) -> None:
    from harnessdrive.tasks.loading import load_task
    from harnessdrive.testing.suites import TaskFiles, write_task
    from harnessdrive.workspace.setup_reuse import dependency_key
    from harnessdrive.workspace.snapshot import build_snapshot

    keys = []
    for name, extra in (
        ("host", {}),
        ("one", {"environment": {"image": "docker://example/one:1"}}),
        ("two", {"environment": {"image": "docker://example/two:1"}}),
    ):
        files = TaskFiles(name, files={"a.txt": "a\n"}, setup=["true"], extra=extra)
        task = load_task(write_task(tmp_path / "tasks", files))
        snapshot = build_snapshot(task.repo_path, None, tmp_path / f"snap-{name}")
        keys.append(dependency_key(task, snapshot, "python3"))
    assert len(set(keys)) == 3


def test_run_lines_after_our_marker_are_setup_commands(tmp_path: Path) -> None:
    from harnessdrive.harbor.dockerfile import SETUP_MARKER

    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(f"FROM a\nWORKDIR /app\nCOPY app/ /app/\n{SETUP_MARKER}\nRUN make x\n")
    plain = read_plain(dockerfile)
    assert isinstance(plain, PlainDockerfile) and plain.setup == ("make x",)
    dockerfile.write_text("FROM a\nWORKDIR /app\n# a comment\nRUN make x\n")
    assert read_plain(dockerfile) == "it runs RUN steps"
