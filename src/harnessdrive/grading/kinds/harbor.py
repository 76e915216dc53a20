"""The ``harbor`` grader kind: a Harbor task's verifier decides, in our grading sandbox.

The task's ``tests/`` folder is copied beside the grading copy and shown at ``/tests`` (it never
reaches the agent); ``/logs/verifier`` is an empty folder outside the copy. ``test.sh`` runs
with ``bash`` in the grading copy (shown at the image's working folder), under the same sandbox,
limits and deadline as every grading command. The reward it writes decides: at least the
threshold is a pass; every named reward is kept as a metric.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from typing import Literal

from pydantic import Field

from harnessdrive.errors import GradingError
from harnessdrive.grading.commands import run_command
from harnessdrive.grading.kinds.base import GradingCopy
from harnessdrive.grading.kinds.harbor_reward import read_reward
from harnessdrive.grading.verdict import Verdict
from harnessdrive.tasks.models import GradeSpec

KIND = "harbor"
TESTS_INSIDE = "/tests"
VERIFIER_LOGS_INSIDE = "/logs/verifier"


class HarborGradeSpec(GradeSpec):
    """``[grade]`` of kind ``harbor``: a Harbor verifier script writes a reward."""

    kind: Literal["harbor"] = "harbor"
    """``harbor``: the task's ``tests/test.sh`` writes ``/logs/verifier/reward.txt`` or
    ``reward.json``."""
    tests: str = "harbor-tests"
    """The verifier's folder, relative to the task folder; shown at ``/tests``."""
    script: str = "test.sh"
    """The script in it that runs the verifier, with bash."""
    threshold: float = 1.0
    """The reward at or above which the change passes."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables the verifier runs with (Harbor's ``[verifier] env``)."""


class HarborKind:
    """Pass when the verifier's reward is at least the threshold."""

    name = KIND
    spec_model = HarborGradeSpec

    def grade(self, copy: GradingCopy, spec: HarborGradeSpec) -> Verdict:
        source = copy.task.folder / spec.tests
        if not (source / spec.script).is_file():
            raise GradingError(f"the verifier {spec.tests}/{spec.script} is missing")
        tests = copy.scratch / "harbor-tests"
        logs = copy.outputs / "harbor-verifier"
        shutil.rmtree(tests, ignore_errors=True)
        shutil.rmtree(logs, ignore_errors=True)
        shutil.copytree(source, tests, symlinks=True)
        logs.mkdir(parents=True)
        isolation = replace(
            copy.isolation,
            mounts=(
                *copy.isolation.mounts,
                (tests, TESTS_INSIDE, True),
                (logs, VERIFIER_LOGS_INSIDE, True),
            ),
        )
        view = replace(copy, env={**copy.env, **spec.env})
        run, _ = run_command(
            view,
            f"bash {TESTS_INSIDE}/{spec.script}",
            "verifier",
            timeout=spec.timeout,
            junit=False,
            isolation=isolation,
        )
        reward = read_reward(logs)
        for name in ("reward.txt", "reward.json"):
            if (logs / name).is_file() and not (logs / name).is_symlink():
                shutil.copyfile(logs / name, copy.logs / f"verifier-{name}")
        score = reward.value if 0.0 <= reward.value <= 1.0 else None
        metrics = {"reward": reward.value, **{f"reward.{k}": v for k, v in reward.named.items()}}
        return Verdict(
            outcome="pass" if reward.value >= spec.threshold else "fail",
            hidden=run,
            score=score,
            metrics=metrics,
        )
