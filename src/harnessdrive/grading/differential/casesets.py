"""Frozen case sets: generated from a seed, answered and tagged by the oracle, filled into one
bucket per rule, written as JSONL beside a meta file.

A case row is ``{"id", "input", "expected", "rules", "bucket"}``; the meta file
(``<name>.meta.json``) holds the seed, profile, oracle version and the bucket sizes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harnessdrive.errors import TaskFormatError, UserError
from harnessdrive.grading.differential.dev_set import write_dev_set
from harnessdrive.grading.differential.pool import answer_pool, journal_path, pool_generator
from harnessdrive.grading.differential.spec import DifferentialGradeSpec, GeneratorSpec
from harnessdrive.tasks.loading import Task

BASE_BUCKET = "base"
"""The bucket of cases no switchable rule changes: what the documented behaviour alone decides."""


class CaseRow(BaseModel):
    """One frozen case."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    input: Any
    expected: Any
    rules: tuple[str, ...] = ()
    bucket: str = BASE_BUCKET
    isolated: bool = False
    """Its answer depends on its one rule alone (or, untagged, on no rule): see
    :meth:`Oracle.isolates`."""


class CaseSetMeta(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int
    profile: str
    oracle_version: str
    pool: int
    per_rule: int
    buckets: dict[str, int]
    isolated: dict[str, int] = Field(default_factory=dict)
    """How many cases of each bucket measure its rule alone."""
    base: int | None = None
    """Cases in the base bucket (None: as many as per rule, sets frozen before it was kept)."""
    composes: bool | None = None
    """Whether the oracle's switches were seen to compose (None: no case two rules change)."""


@dataclass(frozen=True)
class CaseSet:
    rows: tuple[CaseRow, ...]
    meta: CaseSetMeta
    resumed: int = 0
    """Cases and answers taken from an unfinished build's journal."""


class CaseBuildError(UserError):
    """A case set cannot be built as asked."""


def meta_path(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".jsonl") + ".meta.json")


def build_case_set(
    folder: Path,
    spec: DifferentialGradeSpec,
    *,
    pool: int,
    per_rule: int,
    seed: int,
    profile: str | None = None,
    base: int | None = None,
) -> tuple[CaseSet, list[CaseRow]]:
    """``pool`` cases made from ``seed``, answered and tagged, and ``per_rule`` of them per rule
    bucket (and ``base``, by default ``per_rule``, in the base bucket). Returns the set and the
    pool cases it left unused. Answers are journalled as they come: see :mod:`.pool`."""
    base_count = per_rule if base is None else base
    if pool < 1 or per_rule < 1 or base_count < 0:
        raise CaseBuildError(
            "the pool and the cases per rule must be at least 1, the base cases at least 0"
        )
    chosen_profile = profile or spec.generator.profile
    answered = answer_pool(
        folder,
        spec,
        pool=pool,
        seed=seed,
        profile=chosen_profile,
        journal=journal_path(folder / spec.cases),
    )
    if answered.composes is False and len(spec.oracle.rules) > 1:
        raise CaseBuildError(
            "the oracle's switches do not compose: on every case two rules change, switching "
            "both off answers as switching one of them alone; make its switches combine (see "
            "'switches' and '{off}' in the docs)"
        )
    tagged = [
        CaseRow(
            id=f"{chosen_profile}-{seed}-{t.index}",
            input=t.case,
            expected=t.expected,
            rules=t.rules,
            isolated=t.isolated,
        )
        for t in answered.cases
    ]
    rows, unused = fill_buckets(tagged, spec.oracle.rules, per_rule, base=base_count)
    buckets = (*spec.oracle.rules, BASE_BUCKET) if base_count else spec.oracle.rules
    sizes = {b: (base_count if b == BASE_BUCKET else per_rule) for b in buckets}
    meta = CaseSetMeta(
        seed=seed,
        profile=chosen_profile,
        oracle_version=spec.oracle.version,
        pool=pool,
        per_rule=per_rule,
        base=base_count,
        buckets=sizes,
        isolated={b: sum(r.isolated for r in rows if r.bucket == b) for b in buckets},
        composes=answered.composes,
    )
    return CaseSet(rows=tuple(rows), meta=meta, resumed=answered.resumed), unused


def generator(folder: Path, spec: GeneratorSpec) -> Callable[[int, int, str], Any]:
    """Case ``index`` from a seed and a profile, by the task's function or command."""

    def make(index: int, seed: int, profile: str) -> Any:
        one = pool_generator(folder, spec, seed, profile)
        try:
            return one.many([index])[0]
        finally:
            one.close()

    return make


def fill_buckets(
    tagged: Sequence[CaseRow], rules: Sequence[str], per_rule: int, *, base: int | None = None
) -> tuple[list[CaseRow], list[CaseRow]]:
    """``per_rule`` cases for each rule's bucket (cases tagged with that rule: those that
    measure it alone first, then those tagged with it alone, then the rest) and ``base``
    (default ``per_rule``; 0: no base bucket) for the base bucket (untagged cases, isolated
    ones first); no case is used twice."""
    base_count = per_rule if base is None else base
    taken: set[str] = set()
    chosen: list[CaseRow] = []
    # The rule with the fewest cases chooses first, so a plentiful rule never takes them.
    order = sorted(rules, key=lambda rule: _supply(tagged, rule))
    for rule in (*order, BASE_BUCKET) if base_count else order:
        wanted = base_count if rule == BASE_BUCKET else per_rule
        if rule == BASE_BUCKET:
            fits = [row for row in tagged if not row.rules and row.id not in taken]
        else:
            fits = [row for row in tagged if rule in row.rules and row.id not in taken]
        fits.sort(key=lambda row: (not row.isolated, len(row.rules)))  # stable
        if len(fits) < wanted:
            lower = "the base cases (0 allowed)" if rule == BASE_BUCKET else "the cases per rule"
            raise CaseBuildError(
                f"the bucket {rule!r} has only {len(fits)} of the {wanted} cases it needs in "
                f"a pool of {len(tagged)}; raise the pool or lower {lower}"
            )
        for row in fits[:wanted]:
            taken.add(row.id)
            chosen.append(row.model_copy(update={"bucket": rule}))
    unused = [row for row in tagged if row.id not in taken]
    return chosen, unused


def _supply(tagged: Sequence[CaseRow], rule: str) -> tuple[int, int]:
    return (
        sum(row.rules == (rule,) and row.isolated for row in tagged),
        sum(rule in row.rules for row in tagged),
    )


def write_case_set(path: Path, case_set: CaseSet) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [row.model_dump_json() for row in case_set.rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    meta_path(path).write_text(case_set.meta.model_dump_json(indent=2) + "\n", encoding="utf-8")


def read_case_set(path: Path, spec: DifferentialGradeSpec) -> CaseSet:
    """The frozen set at ``path``; refused when it is missing, malformed or frozen with another
    oracle version."""
    try:
        meta = CaseSetMeta.model_validate_json(meta_path(path).read_text(encoding="utf-8"))
        rows = tuple(
            CaseRow.model_validate_json(line)
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        )
    except (OSError, ValidationError, ValueError) as exc:
        raise TaskFormatError(
            f"case set {path.name}: cannot read it ({type(exc).__name__}); build it with "
            "`harnessdrive cases build`"
        ) from None
    if meta.oracle_version != spec.oracle.version:
        raise TaskFormatError(
            f"case set {path.name} was frozen with oracle version {meta.oracle_version!r}, the "
            f"task's oracle is {spec.oracle.version!r}; build it again"
        )
    if not rows:
        raise TaskFormatError(f"case set {path.name} holds no cases")
    return CaseSet(rows=rows, meta=meta)


def dev_rows(unused: Sequence[CaseRow], count: int) -> list[dict[str, Any]]:
    """``count`` visible cases (inputs and answers) from what the hidden set left unused."""
    if count > len(unused):
        raise CaseBuildError(f"only {len(unused)} unused cases are left for a dev set of {count}")
    return [json.loads(row.model_dump_json()) for row in unused[:count]]


@dataclass(frozen=True)
class FrozenSet:
    """What ``cases build`` wrote."""

    path: Path
    cases: int
    buckets: dict[str, int]
    isolated: dict[str, int]
    dev_path: Path | None
    dev_cases: int
    resumed: int = 0
    composes: bool | None = None


def freeze_cases(
    task_folder: Path,
    repo_folder: Path,
    spec: DifferentialGradeSpec,
    *,
    pool: int,
    per_rule: int,
    seed: int,
    profile: str | None = None,
    dev: int = 0,
    base: int | None = None,
) -> FrozenSet:
    """Build the task's hidden case set (and, with ``dev``, a visible one of unused cases in
    the repository at ``dev_cases``) and write them with their meta files."""
    case_set, unused = build_case_set(
        task_folder, spec, pool=pool, per_rule=per_rule, seed=seed, profile=profile, base=base
    )
    dev_path: Path | None = None
    if dev:
        if spec.dev_cases is None:
            raise CaseBuildError("a dev set needs 'dev_cases' in the task's [grade] table")
        dev_path = write_dev_set(
            repo_folder,
            spec.dev_cases,
            dev_rows(unused, dev),
            case_set.meta.model_dump(mode="json"),
            spec.oracle.rules,
            tags=spec.dev_tags,
        )
    path = task_folder / spec.cases
    write_case_set(path, case_set)
    journal_path(path).unlink(missing_ok=True)  # the build is done: nothing left to resume
    meta = case_set.meta
    return FrozenSet(
        path,
        len(case_set.rows),
        meta.buckets,
        meta.isolated,
        dev_path,
        dev,
        resumed=case_set.resumed,
        composes=meta.composes,
    )


def freeze_task_cases(
    task: Task,
    *,
    pool: int,
    per_rule: int,
    seed: int,
    profile: str | None = None,
    dev: int = 0,
    base: int | None = None,
) -> FrozenSet:
    """:func:`freeze_cases` for a loaded task; a task of another kind is refused."""
    spec = task.spec.grade
    if not isinstance(spec, DifferentialGradeSpec):
        raise TaskFormatError(f"task {task.id} is not a differential task (its kind: {spec.kind})")
    return freeze_cases(
        task.folder,
        task.repo_path,
        spec,
        pool=pool,
        per_rule=per_rule,
        seed=seed,
        profile=profile,
        dev=dev,
        base=base,
    )
