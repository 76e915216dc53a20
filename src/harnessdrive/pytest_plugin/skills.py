"""A skill, installed into a cell's workspace the way its harness finds skills, and invoked in
its dialect; and the skill's coverage read from the trial's transcript.

Claude Code reads project skills from ``.claude/skills/<skill>/`` and is invoked as
``/<skill> <task>``; Codex reads ``.agents/skills/<skill>/`` and is invoked as
``$<skill> <task>``. A harness without skills gets the files under ``.skills/<skill>/`` and the
text of SKILL.md in its prompt (the ``prompt`` dialect, which the result and report name). The
skill's ``evals/`` (cases, fixtures, goldens) is never copied.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import UserError

SKILL_FILE = "SKILL.md"
EVALS = "evals"
SCRIPTS = "scripts"


@dataclass(frozen=True)
class Dialect:
    name: str
    folder: str
    """Where the skill goes in the workspace."""
    invocation: str | None
    """How the user names it before the task; None puts SKILL.md's text in the prompt."""


DIALECTS = {
    "claude": Dialect("claude", ".claude/skills", "/{skill} {task}"),
    "codex": Dialect("codex", ".agents/skills", "${skill} {task}"),
}
PROMPT_DIALECT = Dialect("prompt", ".skills", None)


def dialect_for(harness: str) -> Dialect:
    return DIALECTS.get(harness, PROMPT_DIALECT)


@dataclass(frozen=True)
class Skill:
    name: str
    root: Path

    def files(self) -> list[str]:
        """The skill's own files (relative), without its evals/."""
        found = []
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root)
            if rel.parts[0] == EVALS or not path.is_file() or path.is_symlink():
                continue
            found.append(rel.as_posix())
        return found

    def scripts(self) -> list[str]:
        return [f for f in self.files() if f.split("/", 1)[0] == SCRIPTS]

    def install(self, workspace: Path, harness: str) -> str:
        """Copy the skill (never its evals/) into ``workspace``; the installed folder, relative."""
        target = workspace / dialect_for(harness).folder / self.name
        for rel in self.files():
            destination = target / rel
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.root / rel, destination)
        return target.relative_to(workspace).as_posix()

    def prompt(self, task: str, harness: str) -> str:
        dialect = dialect_for(harness)
        if dialect.invocation is not None:
            return dialect.invocation.format(skill=self.name, task=task)
        text = (self.root / SKILL_FILE).read_text(encoding="utf-8", errors="replace")
        folder = f"{dialect.folder}/{self.name}"
        return (
            f"Use the skill {self.name!r}; its files are in {folder}/ and its SKILL.md says:\n\n"
            f"{text}\n\nTask: {task}"
        )


def find_skill(name_or_path: str, eval_dir: Path, skills_dir: Path) -> Skill:
    """A skill by path (relative to the eval file), the skill the evals/ folder sits in, or
    ``<skills_dir>/<name>``."""
    candidates = [eval_dir / name_or_path, skills_dir / name_or_path]
    if eval_dir.name == EVALS and eval_dir.parent.name == Path(name_or_path).name:
        candidates.insert(0, eval_dir.parent)
    for folder in candidates:
        if (folder / SKILL_FILE).is_file():
            root = folder.resolve()
            return Skill(root.name, root)
    raise UserError(
        f"skill {name_or_path!r}: no {SKILL_FILE} in "
        + " or ".join(str(c) for c in dict.fromkeys(candidates))
    )


@dataclass(frozen=True)
class SkillCoverage:
    dialect: str
    installed_at: str
    loaded: tuple[str, ...]
    not_loaded: tuple[str, ...]
    ran: tuple[str, ...]
    not_run: tuple[str, ...]
    observed: bool = True
    """False when the harness recorded no events at all: coverage cannot be told."""
    loaded_bytes: int = 0
    """The size of the loaded files, as the skill's own folder holds them (not the copy the
    agent could edit): what the skill put into the agent's context."""

    def to_json(self) -> dict[str, object]:
        return {
            "dialect": self.dialect,
            "installed_at": self.installed_at,
            "loaded": list(self.loaded),
            "not_loaded": list(self.not_loaded),
            "ran": list(self.ran),
            "not_run": list(self.not_run),
            "observed": self.observed,
            "loaded_bytes": self.loaded_bytes,
        }


def coverage(
    skill: Skill, harness: str, installed_at: str, events: Iterable[tuple[str, str]]
) -> SkillCoverage:
    """Which files the agent read (or that the CLI loaded on invocation: SKILL.md for a
    dialect that injects it) and which scripts a command ran, from ``(kind, text)`` events."""
    seen = [(kind, text) for kind, text in events]
    files = skill.files()
    loaded, ran = [], []
    dialect = dialect_for(harness)
    for rel in files:
        mentioned = any(_names(text, rel) for _, text in seen)
        injected = rel == SKILL_FILE and dialect.name in ("claude", "prompt")
        if mentioned or injected:
            loaded.append(rel)
    for rel in skill.scripts():
        if any(kind == "command" and _names(text, rel) for kind, text in seen):
            ran.append(rel)
    return SkillCoverage(
        dialect=dialect.name,
        installed_at=installed_at,
        loaded=tuple(loaded),
        not_loaded=tuple(f for f in files if f not in loaded),
        ran=tuple(ran),
        not_run=tuple(s for s in skill.scripts() if s not in ran),
        observed=bool(seen),
        loaded_bytes=sum((skill.root / rel).stat().st_size for rel in loaded),
    )


def _names(text: str, rel: str) -> bool:
    # A file counts as named by its path inside the skill ("scripts/x.py"), wherever installed.
    return rel in text
