"""Count test results from a junit XML report.

The report comes from a run of code we do not trust, so it is parsed as untrusted input: the
stdlib parser (expat) refuses entity-expansion bombs and resolves no external entities.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import GradingError


@dataclass(frozen=True)
class JunitCounts:
    total: int
    failed: int
    errors: int
    skipped: int

    @property
    def passed(self) -> int:
        return self.total - self.failed - self.errors - self.skipped


def read_junit(path: Path) -> JunitCounts:
    """Count every ``<testcase>`` in a report with ``<testsuites>`` or ``<testsuite>`` root."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise GradingError(f"unreadable junit report {path.name}: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise GradingError(f"{path.name} is not a junit report (root <{root.tag}>)")
    total = failed = errors = skipped = 0
    for case in root.iter("testcase"):
        total += 1
        tags = {child.tag for child in case}
        if "error" in tags:
            errors += 1
        elif "failure" in tags:
            failed += 1
        elif "skipped" in tags:
            skipped += 1
    return JunitCounts(total=total, failed=failed, errors=errors, skipped=skipped)
