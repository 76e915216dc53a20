"""Where a case's files are: its fixture, task folder, treatments, goldens and skill; and the
one cache root every cell writes under (workspaces built, results, the report)."""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import UserError
from harnessdrive.pytest_plugin.case import EvalCase
from harnessdrive.pytest_plugin.skills import Skill, find_skill

FIXTURES, GOLDENS, TREATMENTS = "fixtures", "goldens", "treatments"


@dataclass(frozen=True)
class CaseFiles:
    """A case's files, resolved and checked at collection."""

    eval_file: Path
    name: str
    """The case's id: ``<module>.<function>``, usable as a task id."""
    task_dir: Path | None
    fixture: Path | None
    skill: Skill | None
    golden: Path
    """``goldens/<name>`` beside the eval file (it need not exist until recorded)."""
    task_id: str
    """The id its trials are recorded under: the case's name (its eval file's path from the
    root, its function and parameter set), or for a task folder that folder's id under the
    eval file's folder, so two skills with the same eval names never share trials."""
    legacy_task_id: str = ""
    """The id the same case had before ids carried the path (``<file stem>.<function>``, or
    the task folder's bare id): how trials recorded then are found."""

    @property
    def eval_dir(self) -> Path:
        return self.eval_file.parent

    def secrets(self) -> list[Path]:
        """What no agent may read: the eval file and its folder (fixtures, goldens, treatments),
        the skill's evals/ and the golden."""
        paths = [self.eval_file, self.eval_dir, self.golden]
        if self.skill is not None:
            paths.append(self.skill.root / "evals")
        return [p.resolve() for p in paths]


def case_files(
    case: EvalCase,
    eval_file: Path,
    function: str,
    skills_dir: Path,
    *,
    root: Path | None = None,
    parameters: str = "",
) -> CaseFiles:
    """``parameters``: the id of the case's parameter set (``@pytest.mark.parametrize``)."""
    eval_dir = eval_file.parent
    where = _from_root(eval_file, root)
    suffix = f"[{parameters}]" if parameters else ""
    name = f"{where}.{function}{suffix}"
    legacy = f"{eval_file.stem}.{function}"
    if (case.task is None) == (case.task_dir is None) and case.skill is None:
        raise UserError(f"{name}: give exactly one of task= (with fixture=) and task_dir=")
    task_dir = None
    task_id = inline_task_id(name)
    legacy_id = inline_task_id(legacy)
    starting: Path | None = None
    if case.task_dir is not None:
        task_dir = (eval_dir / case.task_dir).resolve()
        if not (task_dir / "task.toml").is_file():
            raise UserError(f"{name}: task_dir {case.task_dir!r}: no task.toml in {task_dir}")
        legacy_id, starting = _task_heading(task_dir, name)
        folder = inline_task_id(_from_root(eval_dir, root, suffix=False))
        task_id = inline_task_id(f"{folder}.{legacy_id}{suffix}")
    fixture = None
    if case.fixture is not None:
        for candidate in (eval_dir / FIXTURES / case.fixture, eval_dir / case.fixture):
            if candidate.is_dir():
                fixture = candidate.resolve()
                break
        else:
            raise UserError(
                f"{name}: fixture {case.fixture!r} not found in {eval_dir / FIXTURES} or {eval_dir}"
            )
    elif task_dir is None:
        raise UserError(f"{name}: an inline case needs fixture= (its starting files)")
    skill = find_skill(case.skill, eval_dir, skills_dir) if case.skill else None
    golden_name = case.golden or case.fixture or function
    for treatment in case.treatments:
        if not (eval_dir / TREATMENTS / treatment).is_dir():
            raise UserError(
                f"{name}: treatment {treatment!r}: no folder in {eval_dir / TREATMENTS}"
            )
    files = CaseFiles(
        eval_file=eval_file.resolve(),
        name=name,
        task_dir=task_dir,
        fixture=fixture,
        skill=skill,
        golden=(eval_dir / GOLDENS / golden_name).resolve(),
        task_id=task_id,
        legacy_task_id=legacy_id,
    )
    for copied in (fixture, starting):
        if copied is not None:
            _refuse_secrets_inside(copied, files)
    if skill is not None:
        # A skill's files are copied too, all but its own evals/: a skill folder above the
        # eval file (SKILL.md at the repository root, evals under tests/) would ship it.
        shipped = [
            s
            for s in files.secrets()
            if s.is_relative_to(skill.root) and not s.is_relative_to(skill.root / "evals")
        ]
        if shipped:
            raise UserError(
                f"{name}: the skill {skill.root} holds {shipped[0]}, which no agent may see; "
                "keep a skill's cases under its own evals/ folder"
            )
    return files


def inline_task_id(name: str) -> str:
    """``name`` as a task id: letters, digits, ``.``, ``_`` and ``-``, at most 100 characters
    (a longer one keeps its start and a digest of the whole, so ids stay unique)."""
    text = re.sub(r"[^A-Za-z0-9._-]+", "_", name.replace("/", "-")).strip("_.-") or "case"
    if len(text) <= 100:
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"{text[:87]}-{digest}"


def _from_root(path: Path, root: Path | None, *, suffix: bool = True) -> str:
    """``path`` from the root (pytest's rootdir), without ``.py``: a case id's stem."""
    stem = path.with_suffix("") if suffix else path
    if root is not None:
        try:
            return stem.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return stem.name


def _task_heading(task_dir: Path, name: str) -> tuple[str, Path | None]:
    """A task folder's id and starting repository, read from its task.toml without loading the
    task (which hashes its files): what the forecast and the containment check need."""
    try:
        data = tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{name}: {task_dir / 'task.toml'}: {exc}") from None
    task_id = data.get("id")
    if not isinstance(task_id, str) or not task_id:
        raise UserError(f"{name}: {task_dir / 'task.toml'} has no id")
    repo = data.get("repo")
    path = repo.get("path") if isinstance(repo, dict) else None
    return task_id, (task_dir / path).resolve() if isinstance(path, str) and path else None


def _refuse_secrets_inside(copied: Path, files: CaseFiles) -> None:
    """The starting files are copied into every workspace: they must not hold the eval file,
    its goldens or the skill's evals/, or the agent would be handed the answers."""
    for secret in files.secrets():
        if secret == copied or secret.is_relative_to(copied):
            raise UserError(
                f"{files.name}: the starting files {copied} hold {secret}, which no agent may "
                "see; keep fixtures in their own folder (fixtures/<name>)"
            )
