"""Where two arms differ beyond what the matrix says they differ in.

The matrix names an arm's harness, model, effort and treatment. Two arms that differ in their
harness are expected to differ in CLI version and tool allow-list; arms of different models in
the models the API reported; arms of different treatments in their instruction files and
starting files. Anything else that differs (a CLI upgraded between runs, another sandbox, a
config file, an instruction file the repository itself changed, a variant option) is a
difference the comparison should show, as is a field that varies within one arm.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from harnessdrive.store.provenance import Provenance
from harnessdrive.store.results import TrialResult

NOT_RECORDED = "(not recorded)"


@dataclass(frozen=True)
class ProvenanceDifference:
    """One field whose values the matrix does not explain."""

    field: str
    a: tuple[str, ...]
    """Every value the field takes in arm A's trials (per-task fields as ``task: value``)."""
    b: tuple[str, ...]
    why: str
    """``differs between the arms``, or ``varies within A`` / ``within B``."""
    summary: str | None = None
    """For the configuration hash: how many there are and which settings differ, in place of
    the hashes themselves."""


def provenance_differences(
    arm_a: Sequence[TrialResult], arm_b: Sequence[TrialResult]
) -> tuple[ProvenanceDifference, ...]:
    """The provenance fields on which ``arm_a``'s and ``arm_b``'s trials differ (or vary within
    one arm), leaving out what their variants' harness, model, effort and treatment explain.
    Per-task fields are compared on the tasks both arms ran."""
    shared = {r.task for r in arm_a} & {r.task for r in arm_b}
    a = [r for r in arm_a if r.task in shared]
    b = [r for r in arm_b if r.task in shared]
    differs = {dim: _values(a, _dim(dim)) != _values(b, _dim(dim)) for dim in _DIMS}
    explained: dict[str, bool] = {
        "harnessdrive_version": False,
        "sandbox": False,
        "cli_version": differs["harness"],
        "tools": differs["harness"],
        "options": differs["harness"],
        "models_reported": differs["model"] or (differs["harness"] and not _pinned(a, b)),
        "config_hash": any(differs[d] for d in ("harness", "model", "effort", "options")),
        "instructions_hash": differs["treatment"],
        "start_tree": differs["treatment"],
    }
    found = []
    for field, is_explained in explained.items():
        read = _reader(field)
        values_a, values_b = _values(a, read), _values(b, read)
        if values_a != values_b and not is_explained:
            why, among = "differs between the arms", [*a, *b]
        elif _varies(field, a, read):
            why, among = "varies within A", a
        elif _varies(field, b, read):
            why, among = "varies within B", b
        else:
            continue
        summary = _config_summary(a, b, among) if field == "config_hash" else None
        found.append(ProvenanceDifference(field, values_a, values_b, why, summary))
    return tuple(found)


def _config_summary(
    a: Sequence[TrialResult], b: Sequence[TrialResult], among: Sequence[TrialResult]
) -> str:
    """``A: 3 configurations over 10 trials, B: 1 over 10; they differ in --model, env X``."""

    def count(results: Sequence[TrialResult]) -> str:
        hashes = {r.provenance.config_hash for r in results if r.provenance}
        noun = "configuration" if len(hashes) == 1 else "configurations"
        return f"{len(hashes)} {noun} over {len(results)} trials"

    recorded = [r.provenance.config_parts for r in among if r.provenance is not None]
    recorded = [parts for parts in recorded if parts]
    names = sorted({name for parts in recorded for name in parts})
    differing = [n for n in names if len({parts.get(n) for parts in recorded}) > 1]
    where = (
        f"; they differ in {', '.join(differing)}"
        if differing
        else "; the trials do not record which setting differs"
    )
    return f"A: {count(a)}, B: {count(b)}{where}"


_DIMS = ("harness", "model", "effort", "treatment", "options")
_PER_TASK = {"instructions_hash", "start_tree"}


def _dim(name: str) -> Callable[[TrialResult], str]:
    def read(result: TrialResult) -> str:
        variant = result.variant
        if name == "treatment":
            return variant.treatment.name if variant.treatment else ""
        if name == "options":
            return _options(result)
        return str(getattr(variant, name) or "")

    return read


def _options(result: TrialResult) -> str:
    # Where the model server is differs per arm and task by design; the rest is configuration.
    options = {k: v for k, v in result.variant.options.items() if k != "endpoint"}
    return repr(sorted(options.items()))


def _reader(field: str) -> Callable[[TrialResult], str]:
    if field == "options":
        return _options

    def read(result: TrialResult) -> str:
        provenance: Provenance | None = result.provenance
        if provenance is None:
            return NOT_RECORDED
        value = getattr(provenance, field)
        shown = ", ".join(value) if isinstance(value, tuple) else str(value)
        return f"{result.task}: {shown}" if field in _PER_TASK else shown

    return read


def _values(results: Iterable[TrialResult], read: Callable[[TrialResult], str]) -> tuple[str, ...]:
    return tuple(sorted({read(r) for r in results}))


def _varies(field: str, results: Sequence[TrialResult], read: Callable[[TrialResult], str]) -> bool:
    """More than one value on one task (per-task fields) or across the arm (the others)."""
    if field not in _PER_TASK:
        return len({read(r) for r in results}) > 1
    by_task: dict[str, set[str]] = {}
    for result in results:
        by_task.setdefault(result.task, set()).add(read(result))
    return any(len(values) > 1 for values in by_task.values())


def _pinned(a: Sequence[TrialResult], b: Sequence[TrialResult]) -> bool:
    """Both arms pin one and the same model: then the reported ids should agree too."""
    models = {r.variant.model for r in (*a, *b)}
    return len(models) == 1 and None not in models
