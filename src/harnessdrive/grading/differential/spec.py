"""The ``[grade]`` table of kind ``differential``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from harnessdrive.tasks.models import GradeSpec

KIND = "differential"
CALLABLE_PATTERN = r"^[A-Za-z0-9_./-]+(\.py)?:[A-Za-z_][A-Za-z0-9_]*$"


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OracleSpec(_Table):
    """The reference: the only judge of every answer."""

    function: str = Field(pattern=CALLABLE_PATTERN)
    """``path/to/file.py:name`` relative to the task folder: ``name(case, off)`` returns the
    answer to ``case`` (a JSON value) with the rules in ``off`` (a frozenset) switched off.
    It runs on the host, never in a sandbox the agent's code can reach."""
    version: str = ""
    """Recorded in the case set's meta file; a case set frozen with another version is refused."""
    rules: tuple[str, ...] = ()
    """The rules the oracle can switch off one at a time: each case is tagged with the rules
    whose switching-off changes its answer."""
    rule_words: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Words that name each rule in the agent's claims ("handles braces")."""
    serve: bool = True
    """Serve the oracle on 127.0.0.1 for the agent's run (stopped before grading); the agent's
    sandbox is told its address in ``HARNESSDRIVE_ORACLE_URL``."""


class GeneratorSpec(_Table):
    """How case N is made."""

    function: str = Field(pattern=CALLABLE_PATTERN)
    """``path/to/file.py:name`` relative to the task folder: ``name(index, seed, profile)``
    returns case ``index`` (a JSON object) and depends on nothing else."""
    profile: str = "realistic"
    """The default profile, e.g. ``realistic`` or ``hard``."""


class DifferentialGradeSpec(GradeSpec):
    """``[grade]`` of kind ``differential``: the candidate must answer every hidden case as the
    oracle did."""

    kind: Literal["differential"] = "differential"
    """``differential``: frozen cases, answered by the oracle, decide."""
    candidate: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$")
    """``package.module:function`` in the repository: called with one case, returns its answer."""
    oracle: OracleSpec
    generator: GeneratorSpec
    cases: str = "cases/hidden.jsonl"
    """The frozen case set, relative to the task folder; never copied anywhere the agent's code
    runs (the grader hands the candidate each case's input, never an answer)."""
    dev_cases: str | None = None
    """A visible case set, relative to the repository, that ``cases build --dev`` writes."""
    comparator: Literal["exact", "unordered"] = "exact"
    """``exact``: canonical JSON equal; ``unordered``: equal once every list is sorted."""
    parts: tuple[str, ...] = ()
    """Keys of a case whose list items the minimiser may delete."""
    case_timeout: float = Field(default=5.0, gt=0)
    """Seconds one case may take; a case over it fails alone."""
    threshold: float = Field(default=1.0, ge=0, le=1)
    """The share of cases that must pass (default: every case)."""
    allowed_modules: tuple[str, ...] = ()
    """Modules (``name`` or ``name.attribute``) the candidate may import beyond the default
    allowlist."""
    static: Literal["fail", "report"] = "fail"
    """``fail``: a forbidden import fails the verdict and scores 0; ``report``: listed only."""
    minimise: bool = True
    """Shrink each failing case to a minimal counterexample (the oracle runs on the host)."""
    max_counterexamples: int = Field(default=20, ge=0)
    """At most this many failing cases are shrunk (each rule's first ones)."""
    hide: tuple[str, ...] = ()
    """Host paths the candidate's sandbox must not show (an oracle's binary, say)."""


Comparator = Literal["exact", "unordered"]
