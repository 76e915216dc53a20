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

from harnessdrive.errors import GradingError, TaskFormatError, UserError
from harnessdrive.grading.differential.compare import canonical
from harnessdrive.grading.differential.loading import task_callable
from harnessdrive.grading.differential.oracle import Oracle
from harnessdrive.grading.differential.spec import DifferentialGradeSpec, GeneratorSpec
from harnessdrive.grading.differential.task_commands import TaskCommandError, run_json_command
from harnessdrive.tasks.loading import Task

GENERATOR_SECONDS = 30.0
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


@dataclass(frozen=True)
class CaseSet:
    rows: tuple[CaseRow, ...]
    meta: CaseSetMeta


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
) -> tuple[CaseSet, list[CaseRow]]:
    """``pool`` cases made from ``seed``, answered and tagged, and ``per_rule`` of them per rule
    bucket (and the base bucket). Returns the set and the pool cases it left unused."""
    if pool < 1 or per_rule < 1:
        raise CaseBuildError("the pool and the cases per rule must be at least 1")
    chosen_profile = profile or spec.generator.profile
    generate = generator(folder, spec.generator)
    oracle = Oracle(folder, spec.oracle)
    tagged: list[CaseRow] = []
    seen: set[str] = set()
    for index in range(pool):
        case = generate(index, seed, chosen_profile)
        key = canonical(case)
        if key in seen:  # the same case made twice is one case: never in two buckets
            continue
        seen.add(key)
        try:
            rules = oracle.rules_of(case)
            row = CaseRow(
                id=f"{chosen_profile}-{seed}-{index}",
                input=case,
                expected=oracle.answer(case),
                rules=rules,
                isolated=oracle.isolates(case, rules),
            )
        except GradingError as exc:  # the task's oracle is broken: say so, in one line
            raise CaseBuildError(f"case {index}: {exc}") from None
        tagged.append(row)
    rows, unused = fill_buckets(tagged, spec.oracle.rules, per_rule)
    buckets = (*spec.oracle.rules, BASE_BUCKET)
    meta = CaseSetMeta(
        seed=seed,
        profile=chosen_profile,
        oracle_version=spec.oracle.version,
        pool=pool,
        per_rule=per_rule,
        buckets=dict.fromkeys(buckets, per_rule),
        isolated={b: sum(r.isolated for r in rows if r.bucket == b) for b in buckets},
    )
    return CaseSet(rows=tuple(rows), meta=meta), unused


def generator(folder: Path, spec: GeneratorSpec) -> Callable[[int, int, str], Any]:
    """Case ``index`` from a seed and a profile, by the task's function or command."""
    if spec.function is not None:
        return task_callable(folder, spec.function, "generator")
    words = spec.command or ()

    def make(index: int, seed: int, profile: str) -> Any:
        fill = {"index": str(index), "seed": str(seed), "profile": profile}
        try:
            return run_json_command(folder, words, fill=fill, timeout=GENERATOR_SECONDS)
        except TaskCommandError as exc:
            raise CaseBuildError(f"the generator failed on case {index}: {exc}") from None

    return make


def fill_buckets(
    tagged: Sequence[CaseRow], rules: Sequence[str], per_rule: int
) -> tuple[list[CaseRow], list[CaseRow]]:
    """``per_rule`` cases for each rule's bucket (cases tagged with that rule: those that
    measure it alone first, then those tagged with it alone, then the rest) and for the base
    bucket (untagged cases, isolated ones first); no case is used twice."""
    taken: set[str] = set()
    chosen: list[CaseRow] = []
    # The rule with the fewest cases chooses first, so a plentiful rule never takes them.
    order = sorted(rules, key=lambda rule: _supply(tagged, rule))
    for rule in (*order, BASE_BUCKET):
        if rule == BASE_BUCKET:
            fits = [row for row in tagged if not row.rules and row.id not in taken]
        else:
            fits = [row for row in tagged if rule in row.rules and row.id not in taken]
        fits.sort(key=lambda row: (not row.isolated, len(row.rules)))  # stable
        if len(fits) < per_rule:
            raise CaseBuildError(
                f"the bucket {rule!r} has only {len(fits)} of the {per_rule} cases it needs in "
                f"a pool of {len(tagged)}; raise the pool or lower the cases per rule"
            )
        for row in fits[:per_rule]:
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
) -> FrozenSet:
    """Build the task's hidden case set (and, with ``dev``, a visible one of unused cases in
    the repository at ``dev_cases``) and write them with their meta files."""
    case_set, unused = build_case_set(
        task_folder, spec, pool=pool, per_rule=per_rule, seed=seed, profile=profile
    )
    dev_path: Path | None = None
    if dev:
        if spec.dev_cases is None:
            raise CaseBuildError("a dev set needs 'dev_cases' in the task's [grade] table")
        rows = dev_rows(unused, dev)
        dev_path = repo_folder / spec.dev_cases
        dev_set = CaseSet(
            rows=tuple(CaseRow.model_validate(row) for row in rows),
            meta=case_set.meta.model_copy(update={"buckets": {}}),
        )
        write_case_set(dev_path, dev_set)
    path = task_folder / spec.cases
    write_case_set(path, case_set)
    meta = case_set.meta
    return FrozenSet(path, len(case_set.rows), meta.buckets, meta.isolated, dev_path, dev)


def freeze_task_cases(
    task: Task,
    *,
    pool: int,
    per_rule: int,
    seed: int,
    profile: str | None = None,
    dev: int = 0,
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
    )
