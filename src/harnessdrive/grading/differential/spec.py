"""The ``[grade]`` table of kind ``differential``."""

from __future__ import annotations

import shlex
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harnessdrive.tasks.models import GradeSpec

KIND = "differential"
CALLABLE_PATTERN = r"^[A-Za-z0-9_./-]+(\.py)?:[A-Za-z_][A-Za-z0-9_]*$"


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Protocol = Literal["call", "lines"]
Command = tuple[str, ...]
"""A command as its words: a TOML list, or a string split as a shell would (no shell runs)."""


def _words(value: object) -> object:
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError as exc:
            raise ValueError(f"cannot split the command: {exc}") from None
    return value


def _one_of(what: str, function: object, command: object) -> None:
    if (function is None) == (command is None):
        raise ValueError(f"give the {what} either a function or a command, not both or neither")
    if command is not None and not command:
        raise ValueError(f"the {what}'s command is empty")


class OracleSpec(_Table):
    """The reference: the only judge of every answer."""

    function: str | None = Field(default=None, pattern=CALLABLE_PATTERN)
    """``path/to/file.py:name`` relative to the task folder: ``name(case, off)`` returns the
    answer to ``case`` (a JSON value) with the rules in ``off`` (a frozenset) switched off.
    It runs on the host, never in a sandbox the agent's code can reach."""
    command: Command | None = None
    """Or a command run in the task folder on the host: it gets the case as JSON on stdin (or,
    where a word is ``{case}``, in a file of that name) and prints the answer as JSON."""
    protocol: Protocol = "call"
    """``call``: the command runs once per answer; ``lines``: it runs once, long-lived, reading
    one JSON request a line on stdin (``{"case": ..., "off": [rules]}``) and printing one JSON
    reply a line on stdout (``{"answer": ...}``), in order."""
    switches: dict[str, str] = Field(default_factory=dict)
    """How the command switches each rule off: a word added to it (``--no-braces``), or
    ``NAME=value`` set in its environment; two rules that set one variable set it to both
    values joined by commas (``OFF=a,b``). A word ``{off}`` of the command is replaced by the
    rules switched off, joined by commas, instead."""
    answer_timeout: float = Field(default=30.0, gt=0)
    """Seconds the oracle's command may take on one case."""
    retries: int = Field(default=2, ge=0)
    """How many times a case build asks again after an answer took over ``answer_timeout``."""
    server: Command | None = None
    """A loopback server of the task's own for the agent's run, in place of the one
    harnessdrive serves: started in the task folder with ``{port}`` replaced by a free port,
    it must listen on 127.0.0.1 at that port; stopped before grading."""
    server_start_timeout: float = Field(default=20.0, gt=0)
    """Seconds the server may take to listen."""
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

    _words = field_validator("command", "server", mode="before")(_words)

    @model_validator(mode="after")
    def _complete(self) -> Self:
        _one_of("oracle", self.function, self.command)
        takes_off = self.command is not None and any("{off}" in w for w in self.command)
        if self.command is not None and self.protocol == "call" and not takes_off:
            missing = [rule for rule in self.rules if rule not in self.switches]
            if missing:
                raise ValueError(f"the oracle's command has no switch for {', '.join(missing)}")
        unknown = sorted(set(self.switches) - set(self.rules))
        if unknown:
            raise ValueError(f"switches name rules the oracle does not list: {', '.join(unknown)}")
        if self.server is not None and not any("{port}" in word for word in self.server):
            raise ValueError("the oracle's server command must take {port}")
        return self


class GeneratorSpec(_Table):
    """How case N is made."""

    function: str | None = Field(default=None, pattern=CALLABLE_PATTERN)
    """``path/to/file.py:name`` relative to the task folder: ``name(index, seed, profile)``
    returns case ``index`` (a JSON object) and depends on nothing else."""
    command: Command | None = None
    """Or a command run in the task folder on the host, its words ``{index}``, ``{seed}`` and
    ``{profile}`` replaced, that prints case ``index`` as JSON."""
    protocol: Protocol = "call"
    """``call``: the command runs once per case; ``lines``: once, long-lived, reading one JSON
    request a line (``{"index": i, "seed": s, "profile": p}``) and printing one JSON reply a
    line (``{"case": ...}``), in order."""
    profile: str = "realistic"
    """The default profile, e.g. ``realistic`` or ``hard``."""

    _words = field_validator("command", mode="before")(_words)

    @model_validator(mode="after")
    def _complete(self) -> Self:
        _one_of("generator", self.function, self.command)
        return self


class DifferentialGradeSpec(GradeSpec):
    """``[grade]`` of kind ``differential``: the candidate must answer every hidden case as the
    oracle did."""

    kind: Literal["differential"] = "differential"
    """``differential``: frozen cases, answered by the oracle, decide."""
    candidate: str | None = Field(
        default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$"
    )
    """``package.module:function`` in the repository: called with one case, returns its answer."""
    candidate_command: Command | None = None
    """Or a command run in the repository once per case, in the grading sandbox: it gets the
    case as JSON on stdin (or, where a word is ``{case}``, in a file of that name) and prints
    its answer as JSON. A first word ``python`` or ``python3`` is the grading Python, one with
    a ``/`` is the repository's file, any other is found on the host's PATH."""
    oracle: OracleSpec
    generator: GeneratorSpec
    cases: str = "cases/hidden.jsonl"
    """The frozen case set, relative to the task folder; never copied anywhere the agent's code
    runs (the grader hands the candidate each case's input, never an answer)."""
    dev_cases: str | None = None
    """A visible case set, relative to the repository, that ``cases build --dev`` writes."""
    dev_tags: bool = False
    """Show each dev case's rule tags and bucket (they name rules the README may not)."""
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
    minimise_calls: int = Field(default=500, ge=1)
    """At most this many tries (each at most one oracle answer) shrink one counterexample."""
    max_counterexamples: int = Field(default=20, ge=0)
    """At most this many failing cases are shrunk (each rule's first ones)."""
    hide: tuple[str, ...] = ()
    """Host paths the candidate's sandbox must not show (an oracle's binary, say)."""
    starter_score: float = Field(default=0.0, ge=0, le=1)
    """The most ``check`` lets the untouched starter score (a partial implementation may score
    some)."""

    _words = field_validator("candidate_command", mode="before")(_words)

    @model_validator(mode="after")
    def _one_candidate(self) -> Self:
        if (self.candidate is None) == (self.candidate_command is None):
            raise ValueError("give either 'candidate' or 'candidate_command', not both or neither")
        if self.candidate_command is not None and not self.candidate_command:
            raise ValueError("'candidate_command' is empty")
        return self


Comparator = Literal["exact", "unordered"]
