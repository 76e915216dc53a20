"""Read test results from a junit XML report.

The report comes from a run of code we do not trust, so it is parsed as untrusted input: the
stdlib parser (expat) refuses entity-expansion bombs and resolves no external entities, and the
report is streamed through it with bounds on size, nesting and case count (grading/hostile.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from xml.parsers import expat

from harnessdrive.errors import AgentDataError
from harnessdrive.grading.hostile import AGENT_DATA_ERRORS, MAX_DEPTH, excerpt

MAX_REPORT_BYTES = 256 * 1024 * 1024
"""A report larger than this is refused unread (the agent's fail); no honest suite comes near."""
MAX_TOKEN_BYTES = 4 * 1024 * 1024
"""The most bytes one tag, comment or text piece may span: what the parser must hold at once."""
MAX_CASES = 1_000_000
MAX_NAME = 4096
"""Characters of a test's name or class name kept."""
CHUNK_BYTES = 256 * 1024

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


def read_cases(path: Path, *, max_bytes: int = MAX_REPORT_BYTES) -> list[JunitCase]:
    """Every ``<testcase>`` in a report with ``<testsuites>`` or ``<testsuite>`` root.

    Streamed: text is never kept, so memory stays bounded whatever the report holds. A report
    over ``max_bytes``, nested deeper than the bound, with a single token over
    :data:`MAX_TOKEN_BYTES` or more than :data:`MAX_CASES` cases, or that expat cannot read (a
    syntax error, a declared encoding it does not support) raises :class:`AgentDataError`: the
    report comes from the code under test, so it is the agent's failure to pass.
    """
    reader = _CaseReader(path.name)
    try:
        size = path.lstat().st_size
        if path.is_symlink() or not path.is_file():
            raise AgentDataError(f"the junit report {path.name} is not a regular file")
        if size > max_bytes:
            raise AgentDataError(f"the junit report {path.name} is over {max_bytes} bytes ({size})")
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                reader.feed(chunk)
        reader.feed(b"", final=True)
    except OSError as exc:
        raise AgentDataError(f"unreadable junit report {path.name}: {exc.strerror}") from None
    except AGENT_DATA_ERRORS as exc:
        why = excerpt(str(exc), 300)
        raise AgentDataError(f"unreadable junit report {path.name}: {why}") from None
    return reader.cases


class _CaseReader:
    """An expat parser that keeps each test case's names and the tags of its children only."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.cases: list[JunitCase] = []
        self._parser = expat.ParserCreate()
        self._parser.StartElementHandler = self._start
        self._parser.EndElementHandler = self._end
        # Text is counted as an event and dropped: it is never joined into a string.
        self._parser.CharacterDataHandler = self._seen
        self._parser.CommentHandler = self._seen
        self._parser.DefaultHandlerExpand = self._seen
        self._depth = 0
        self._root: str | None = None
        self._case: tuple[str, str] | None = None
        self._case_depth = 0
        self._tags: set[str] = set()
        self._fed = 0
        self._last_event = 0

    def feed(self, chunk: bytes, *, final: bool = False) -> None:
        self._fed += len(chunk)
        self._parser.Parse(chunk, final)
        if self._fed - self._last_event > MAX_TOKEN_BYTES:
            raise AgentDataError(f"{self.name} holds a single token over {MAX_TOKEN_BYTES} bytes")
        if final and self._root is None:
            raise AgentDataError(f"{self.name} holds no element")

    def _seen(self, *_: object) -> None:
        self._last_event = self._fed

    def _start(self, tag: str, attributes: dict[str, str]) -> None:
        self._last_event = self._fed
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise AgentDataError(f"{self.name} nests deeper than {MAX_DEPTH} elements")
        if self._root is None:
            self._root = tag
            if tag not in ("testsuites", "testsuite"):
                raise AgentDataError(f"{self.name} is not a junit report (root <{tag[:80]}>)")
        if self._case is not None:
            if self._depth == self._case_depth + 1:
                self._tags.add(tag)
            return
        if tag == "testcase":
            if len(self.cases) >= MAX_CASES:
                raise AgentDataError(f"{self.name} holds more than {MAX_CASES} test cases")
            self._case = (
                attributes.get("classname", "")[:MAX_NAME],
                attributes.get("name", "")[:MAX_NAME],
            )
            self._case_depth = self._depth
            self._tags = set()

    def _end(self, tag: str) -> None:
        self._last_event = self._fed
        if self._case is not None and self._depth == self._case_depth:
            tags = self._tags
            outcome: CaseOutcome = (
                "error"
                if "error" in tags
                else "failed"
                if "failure" in tags
                else "skipped"
                if "skipped" in tags
                else "passed"
            )
            self.cases.append(JunitCase(*self._case, outcome))
            self._case = None
        self._depth -= 1


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
