"""Treatments: overlay folders copied over the workspace before the agent starts.

One treatment carries the same instructions in each harness's own file (``AGENTS.md`` for
Codex, ``CLAUDE.md`` for Claude Code, ``GEMINI.md`` for Gemini CLI, ...): each harness gets its
own instruction files and every file that is no harness's instruction file, never another
harness's. A treatment that would give a harness nothing, or that carries instructions but none
in that harness's file, is refused before anything runs.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harnessdrive.errors import UserError
from harnessdrive.harnesses.entry import HarnessEntry
from harnessdrive.tasks.matrix_models import TREATMENTS_FOLDER, TreatmentSpec


@dataclass(frozen=True)
class Treatment:
    """A treatment's folder and its files, relative POSIX paths, in order."""

    name: str
    folder: Path
    files: tuple[str, ...]

    def files_for(self, own: Iterable[str], known: Iterable[str]) -> tuple[str, ...]:
        """The files a harness gets: those named like one of its ``own`` instruction files,
        and every one not named like any harness's (``known``) instruction file."""
        own_names, known_names = set(own), set(known) | set(own)
        return tuple(
            rel
            for rel in self.files
            if (name := PurePosixPath(rel).name) in own_names or name not in known_names
        )

    def digest(self, files: Iterable[str]) -> str:
        """A hash of ``files``' paths and contents: what a harness got of this treatment."""
        hashed = hashlib.sha256()
        for rel in sorted(files):
            hashed.update(rel.encode() + b"\0")
            hashed.update(hashlib.sha256((self.folder / rel).read_bytes()).digest())
        return hashed.hexdigest()[:16]


def treatment_folder(spec: TreatmentSpec, suite_folder: Path) -> Path:
    """Where ``spec``'s files are: its ``folder``, else the suite's ``treatments/<name>``."""
    if spec.folder is None:
        return (suite_folder / TREATMENTS_FOLDER / spec.name).resolve()
    folder = Path(spec.folder).expanduser()
    return (folder if folder.is_absolute() else suite_folder / folder).resolve()


def load_treatment(spec: TreatmentSpec, suite_folder: Path) -> Treatment:
    """The treatment ``spec`` names, its files listed; a missing or unusable folder is a
    one-line :class:`UserError`."""
    folder = treatment_folder(spec, suite_folder)
    if not folder.is_dir():
        raise UserError(f"treatment {spec.name!r}: no folder {folder}")
    files: list[str] = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for entry in [*dirs, *sorted(names)]:
            path = Path(root) / entry
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                raise UserError(f"treatment {spec.name!r}: {rel} is a link; copy the file in")
            if entry == ".git":
                raise UserError(f"treatment {spec.name!r}: {rel} may not be part of an overlay")
            if path.is_file():
                files.append(rel)
    if not files:
        raise UserError(f"treatment {spec.name!r}: its folder {folder} holds no files")
    return Treatment(name=spec.name, folder=folder, files=tuple(files))


def check_treatment(treatment: Treatment, entry: HarnessEntry, known: Iterable[str]) -> None:
    """Refuse ``treatment`` for ``entry``'s harness when it would give it nothing, or carries
    instructions for other harnesses but none in this one's own file."""
    known_names = set(known)
    given = treatment.files_for(entry.instruction_files, known_names)
    wanted = " or ".join(entry.instruction_files) or "none declared"
    if not given:
        raise UserError(
            f"treatment {treatment.name!r} has no files for {entry.name} "
            f"(its instruction file: {wanted})"
        )
    carries = {PurePosixPath(rel).name for rel in treatment.files} & known_names
    own = {PurePosixPath(rel).name for rel in given} & set(entry.instruction_files)
    if carries and not own:
        raise UserError(
            f"treatment {treatment.name!r} carries instructions ({', '.join(sorted(carries))}) "
            f"but none for {entry.name} (its instruction file: {wanted})"
        )
