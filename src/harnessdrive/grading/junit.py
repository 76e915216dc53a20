"""Read test results from a junit XML report.

The report comes from a run of code we do not trust, so it is parsed as untrusted input: the
stdlib parser (expat) refuses entity-expansion bombs and resolves no external entities.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harnessdrive.errors import GradingError

CaseOutcome = Literal["passed", "failed", "error", "skipped"]


@dataclass(frozen=True)
class JunitCase:
    classname: str
    name: str
    outcome: CaseOutcome


@dataclass(frozen=True)
class JunitCounts:
    total: int
    failed: int
    errors: int
    skipped: int

    @property
    def passed(self) -> int:
        return self.total - self.failed - self.errors - self.skipped


def read_cases(path: Path) -> list[JunitCase]:
    """Every ``<testcase>`` in a report with ``<testsuites>`` or ``<testsuite>`` root."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise GradingError(f"unreadable junit report {path.name}: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise GradingError(f"{path.name} is not a junit report (root <{root.tag}>)")
    cases = []
    for case in root.iter("testcase"):
        tags = {child.tag for child in case}
        outcome: CaseOutcome = (
            "error"
            if "error" in tags
            else "failed"
            if "failure" in tags
            else "skipped"
            if "skipped" in tags
            else "passed"
        )
        cases.append(JunitCase(case.get("classname", ""), case.get("name", ""), outcome))
    return cases


def count_cases(cases: Iterable[JunitCase]) -> JunitCounts:
    outcomes = [case.outcome for case in cases]
    return JunitCounts(
        total=len(outcomes),
        failed=outcomes.count("failed"),
        errors=outcomes.count("error"),
        skipped=outcomes.count("skipped"),
    )


def read_junit(path: Path) -> JunitCounts:
    """Count every ``<testcase>`` in the report."""
    return count_cases(read_cases(path))
