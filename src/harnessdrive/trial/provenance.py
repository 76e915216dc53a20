"""A trial's provenance, gathered by the trial core from the start it gave the agent and the
runs it got back (store/provenance.py)."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from harnessdrive.harnesses.base import AgentRun
from harnessdrive.harnesses.registry import HOOK as HARNESSES_HOOK
from harnessdrive.matrix.resolve import known_instruction_files
from harnessdrive.plugins.registry import supplied_by
from harnessdrive.protocols.registry import HOOK as PROTOCOLS_HOOK
from harnessdrive.store.provenance import Provenance, Supplied, Suppliers
from harnessdrive.tasks.grade_kinds import GRADER_KINDS_HOOK
from harnessdrive.tasks.identity import harnessdrive_version
from harnessdrive.workspace.git import git
from harnessdrive.workspace.snapshot import Snapshot


def trial_provenance(snapshot: Snapshot, runs: Sequence[AgentRun], sandbox: str) -> Provenance:
    """What the agent started from and how its harness ran it (the last round's setting)."""
    instructions = instruction_hashes(snapshot)
    combined = None
    if instructions:
        digest = hashlib.sha256()
        for rel, each in sorted(instructions.items()):
            digest.update(f"{rel}\0{each}\0".encode())
        combined = digest.hexdigest()[:16]
    models: dict[str, None] = {}
    for run in runs:
        for call in run.transcript.calls:
            models.setdefault(call.model, None)
    last = runs[-1] if runs else None
    setting = last.setting if last is not None else None
    return Provenance(
        harnessdrive_version=harnessdrive_version(),
        cli_version=last.version if last is not None else None,
        config_hash=setting.config_hash if setting is not None else None,
        tools=setting.tools if setting is not None else (),
        instruction_files=instructions,
        instructions_hash=combined,
        start_tree=snapshot.tree,
        models_reported=tuple(models),
        sandbox=sandbox,
    )


def instruction_hashes(snapshot: Snapshot) -> dict[str, str]:
    """Each file of the snapshot named like any harness's instruction file, hashed."""
    return dict(_instruction_hashes(snapshot.root, snapshot.tree, known_instruction_files()))


@functools.lru_cache(maxsize=256)
def _instruction_hashes(
    root: Path, tree: str, names: frozenset[str]
) -> tuple[tuple[str, str], ...]:
    # A snapshot's files never change once built and its tree names them, so every trial
    # from one snapshot shares one answer (and one ``git ls-files``).
    listed = git("ls-files", "-z", cwd=root).decode("utf-8", "surrogateescape")
    found = []
    for rel in sorted(filter(None, listed.split("\0"))):
        if PurePosixPath(rel).name in names:
            path = root / rel
            if path.is_file() and not path.is_symlink():
                found.append((rel, hashlib.sha256(path.read_bytes()).hexdigest()[:16]))
    return tuple(found)


def trial_suppliers(harness: str, grader_kind: str, protocol: str) -> Suppliers:
    """The installed distribution and version that supplied the trial's harness, grader kind
    and protocol (``harnessdrive`` for its built-ins; unnamed for a harness given by a
    ``package.module:Factory`` path, which no plugin registers)."""

    def supplied(hook: str, name: str) -> Supplied:
        found = supplied_by(hook, name)
        return Supplied(name=name, distribution=found.name, version=found.version)

    return Suppliers(
        harness=supplied(HARNESSES_HOOK, harness),
        grader_kind=supplied(GRADER_KINDS_HOOK, grader_kind),
        protocol=supplied(PROTOCOLS_HOOK, protocol),
    )
