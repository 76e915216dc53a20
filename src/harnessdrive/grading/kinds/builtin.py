"""harnessdrive's own grader kinds, registered through the hook exactly as a plugin's are."""

from __future__ import annotations

from typing import Any

from harnessdrive.grading.differential.kind import DifferentialKind
from harnessdrive.grading.kinds.base import GraderKind
from harnessdrive.grading.kinds.harbor import HarborKind
from harnessdrive.grading.kinds.improve import ImproveKind
from harnessdrive.grading.kinds.tests import TestsKind
from harnessdrive.plugins.hookspecs import hookimpl


@hookimpl
def harnessdrive_grader_kinds() -> list[GraderKind[Any]]:
    return [TestsKind(), ImproveKind(), DifferentialKind(), HarborKind()]
