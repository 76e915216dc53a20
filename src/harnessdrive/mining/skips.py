"""Which tests a run skipped and why, from the junit report it left in its logs.

A suite that passes at HEAD with a third of its tests skipped (an optional dependency missing
from the environment) judges every commit by the remaining two thirds, and a commit whose tests
are among the skipped ones is rejected as "passes before the fix". The HEAD check says so, with
the reasons the runner gave, grouped.

The report comes from a run of the project's code: it is parsed as untrusted input (expat, no
entities resolved), and its messages are cut short.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

MANY_SKIPPED = 0.1
"""Warn when more than this share of the tests were skipped."""
MAX_REASONS = 5
MAX_NAMED = 5
"""Skipped tests named per reason (the count says how many there are)."""
_REASON_LENGTH = 160
# pytest.importorskip's and a plain ImportError's words for a module that is not installed.
_NOT_INSTALLED = (
    re.compile(r"could not import '([\w.]+)'"),
    re.compile(r"No module named '([\w.]+)'"),
)
_SKIP_PREFIX = re.compile(r"^(Skipped|SKIPPED):\s*")


@dataclass(frozen=True)
class SkipReport:
    skipped: int
    total: int
    reasons: tuple[tuple[str, int], ...]
    """The commonest reasons first, with the number of tests each skipped."""
    named: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """For each of ``reasons``, the first tests it skipped (``classname::name``)."""

    def names(self, reason: str) -> tuple[str, ...]:
        return dict(self.named).get(reason, ())

    @property
    def many(self) -> bool:
        return self.total > 0 and self.skipped / self.total > MANY_SKIPPED

    def describe(self) -> str:
        """``140 of 348 skipped: cryptography not installed (140)``."""
        text = f"{self.skipped} of {self.total} tests skipped"
        if self.reasons:
            text += ": " + "; ".join(f"{reason} ({count})" for reason, count in self.reasons)
        return text


def read_skips(logs: Path) -> SkipReport | None:
    """The skips of the run whose junit report is in ``logs``; None without a readable one."""
    cases = _cases(logs)
    if cases is None:
        return None
    reasons: Counter[str] = Counter()
    named: dict[str, list[str]] = {}
    for name, reason in cases:
        if reason is not None:
            reasons[reason] += 1
            named.setdefault(reason, []).append(name)
    common = tuple(reasons.most_common(MAX_REASONS))
    examples = tuple((reason, tuple(named[reason][:MAX_NAMED])) for reason, _ in common)
    return SkipReport(sum(reasons.values()), len(cases), common, examples)


def skipped_tests(logs: Path) -> dict[str, str]:
    """Each test the run in ``logs`` skipped (``classname::name``) with its reason."""
    return {name: reason for name, reason in _cases(logs) or [] if reason is not None}


def _cases(logs: Path) -> list[tuple[str, str | None]] | None:
    """Every test case of the junit report in ``logs`` with its skip reason (None: not
    skipped); None without a readable report."""
    reports = sorted(logs.glob("junit-*.xml"))
    if not reports:
        return None
    try:
        root = ET.parse(reports[-1]).getroot()
    except (ET.ParseError, OSError):
        return None
    found: list[tuple[str, str | None]] = []
    for case in root.iter("testcase"):
        name = f"{case.get('classname') or ''}::{case.get('name') or ''}"
        skipped = case.find("skipped")
        reason = None
        if skipped is not None:
            reason = skip_reason(skipped.get("message") or "", skipped.text or "")
        found.append((name, reason))
    return found


def skip_reason(message: str, details: str = "") -> str:
    """A runner's skip message in a few words: a missing module as ``X not installed``.

    pytest gives a module skipped at import the message ``collection skipped`` and the reason
    in the element's text; both are read."""
    for pattern in _NOT_INSTALLED:
        found = pattern.search(message) or pattern.search(details)
        if found is not None:
            return f"{found.group(1).split('.')[0]} not installed"
    if message in ("", "collection skipped") and details:
        message = details.strip().rsplit(":", 1)[-1] if details.startswith("(") else details
    text = _SKIP_PREFIX.sub("", " ".join(message.split()))
    if len(text) > _REASON_LENGTH:
        text = text[: _REASON_LENGTH - 3] + "..."
    return text or "no reason given"
