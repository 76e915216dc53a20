"""``harnessdrive import harbor PATH``: Harbor tasks written as a harnessdrive suite.

Each Harbor task becomes ``tasks/<id>/`` with:

- ``instruction.md``: the prompt;
- ``repo/``: the starting files: the image's working folder, plus what a plain Dockerfile copies
  into it;
- ``[environment]``: the image (its base image for a plain Dockerfile, with its working folder
  and ``ENV``), named through the image map where the user gives local copies;
- ``harbor-tests/``: the verifier, graded by the ``harbor`` kind (never shown to the agent);
- ``solution/solution.patch``: what ``solution/solve.sh`` changes, run once here in the image;
- limits from ``[agent]``, ``[verifier]`` and ``[environment]``.

A task that cannot be imported is one line naming it; the others are written.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import ValidationError

from harnessdrive.environments.oci.build import builder
from harnessdrive.environments.oci.cache import ImageCache, resolve_image
from harnessdrive.environments.oci.sources import dockerfile_source, parse_image
from harnessdrive.errors import HarnessdriveError, ImageError, UserError
from harnessdrive.harbor.dockerfile import PlainDockerfile, read_plain
from harnessdrive.harbor.reference import reference_patch
from harnessdrive.harbor.task_file import HarborTaskFile
from harnessdrive.sandbox.image_root import ImageRoot

# Files through which a change could steer the verifier's Python from outside the agent's own
# code; a change to one of them is a tamper finding.
PROTECTED = ("conftest.py", "**/conftest.py", "sitecustomize.py", "usercustomize.py", "**/*.pth")
_DEFAULT_AGENT_TIMEOUT = 900.0
_DEFAULT_VERIFIER_TIMEOUT = 600.0
_SETUP_KEY = "\0setup"  # carried from the Dockerfile to task.toml's [setup], never written


DOCKERFILE = "Dockerfile"


class HarborTaskError(HarnessdriveError):
    """One Harbor task cannot be imported; the message names why."""


@dataclass
class ImportReport:
    suite: Path
    written: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """One line per task not imported: ``task NAME: reason``."""


@dataclass(frozen=True)
class ImportOptions:
    images: Mapping[str, str] = field(default_factory=dict)
    """Image names as the tasks give them → the image to use (a local copy, say)."""
    threshold: float | None = None
    """The reward that passes, for every task (default: the task's own, else 1.0)."""
    cache: ImageCache | None = None
    reference: bool = True
    """Run ``solve.sh`` to make each task's reference."""


def harbor_task_folders(path: Path) -> tuple[str, list[Path]]:
    """The dataset's name and its task folders: ``path`` is a task folder, a dataset folder
    (task folders inside) or a ``dataset.toml``."""
    path = path.resolve()
    if not path.exists():
        raise UserError(f"Harbor path not found: {path}")
    if path.is_file():
        if path.name != "dataset.toml":
            raise UserError(f"{path}: neither a Harbor task folder nor a dataset.toml")
        return _dataset(path)
    if (path / "task.toml").is_file():
        return _safe_id(path.name), [path]
    if (path / "dataset.toml").is_file():
        return _dataset(path / "dataset.toml")
    folders = sorted(p for p in path.iterdir() if (p / "task.toml").is_file())
    if not folders:
        raise UserError(f"{path}: no Harbor task (a folder with task.toml) found")
    return _safe_id(path.name), folders


def _dataset(path: Path) -> tuple[str, list[Path]]:
    try:
        data = tomllib.loads(path.read_text(errors="replace"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{path}: not a readable dataset.toml ({exc})") from None
    nested = data.get("dataset")
    table: dict[str, Any] = nested if isinstance(nested, dict) else data
    name = str(table.get("name") or path.parent.name).split("/")[-1].split("@")[0]
    listed = table.get("tasks")
    if isinstance(listed, list):
        folders = []
        for item in listed:
            where = item.get("path") if isinstance(item, dict) else item
            if isinstance(where, str):
                folders.append((path.parent / where).resolve())
        return _safe_id(name), folders
    folders = sorted(p for p in path.parent.iterdir() if (p / "task.toml").is_file())
    return _safe_id(name), folders


def import_harbor(path: Path, out: Path, options: ImportOptions | None = None) -> ImportReport:
    """Write the Harbor tasks at ``path`` as a suite in ``out``."""
    options = options or ImportOptions()
    name, folders = harbor_task_folders(path)
    out = out.resolve()
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    report = ImportReport(out)
    for folder in folders:
        label = folder.name
        try:
            label = _write_task(folder, out / "tasks", options)
            report.written.append(label)
        except (HarborTaskError, HarnessdriveError, OSError, ValueError) as exc:
            report.refused.append(f"task {label}: {_one_line(str(exc))}")
    suite = {"name": name, "description": f"Imported from Harbor: {path.name}"}
    (out / "suite.toml").write_text(tomli_w.dumps(suite))
    return report


def _write_task(folder: Path, tasks: Path, options: ImportOptions) -> str:
    if not (folder / "task.toml").is_file():
        raise HarborTaskError("no task.toml")
    try:
        raw = tomllib.loads((folder / "task.toml").read_text(errors="replace"))
        spec = HarborTaskFile.model_validate(raw)
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise HarborTaskError(f"task.toml is not a Harbor task ({_one_line(str(exc))})") from None
    task_id = _safe_id(spec.task.name.split("/")[-1] if spec.task.name else folder.name)
    reasons = spec.unsupported()
    if (folder / "environment" / "docker-compose.yaml").is_file() or (
        folder / "environment" / "docker-compose.yml"
    ).is_file():
        reasons.append("it needs several containers (docker-compose)")
    if reasons:
        raise HarborTaskError("not supported: " + "; ".join(reasons))
    instruction = folder / "instruction.md"
    if not instruction.is_file():
        raise HarborTaskError("no instruction.md")
    if not (folder / "tests" / "test.sh").is_file():
        raise HarborTaskError("no tests/test.sh")
    target = tasks / task_id
    partial = tasks / f".{task_id}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        environment, image = _environment(folder, spec, partial / "repo", options)
        shutil.copyfile(instruction, partial / "instruction.md")
        shutil.copytree(folder / "tests", partial / "harbor-tests", symlinks=True)
        solve = folder / "solution" / "solve.sh"
        if options.reference and solve.is_file():
            timeout = spec.agent.timeout_sec or _DEFAULT_AGENT_TIMEOUT
            patch = reference_patch(partial / "repo", folder / "solution", image, timeout)
            (partial / "solution").mkdir()
            (partial / "solution" / "solution.patch").write_text(patch)
        setup = environment.pop(_SETUP_KEY, [])
        task_toml = _task_toml(task_id, folder, spec, environment, options)
        if setup:
            network = "host" if spec.environment.allow_internet else "none"
            task_toml["setup"] = {"commands": setup, "network": network}
        (partial / "task.toml").write_text(tomli_w.dumps(task_toml, multiline_strings=True))
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return task_id


def _environment(
    folder: Path, spec: HarborTaskFile, repo: Path, options: ImportOptions
) -> tuple[dict[str, Any], ImageRoot]:
    """The ``[environment]`` table, the resolved image, and the starting files in ``repo``."""
    env_folder = folder / "environment"
    dockerfile = env_folder / DOCKERFILE
    plain: PlainDockerfile | None = None
    if spec.environment.docker_image:
        image_name = spec.environment.docker_image
    elif dockerfile.is_file():
        read = read_plain(dockerfile)
        if isinstance(read, str):
            return _built(folder, spec, repo, options, read)
        plain = read
        image_name = plain.base
    else:
        raise HarborTaskError("no environment: neither docker_image nor environment/Dockerfile")
    source_text = options.images.get(image_name, image_name)
    source = parse_image(source_text, env_folder if env_folder.is_dir() else folder)
    image = resolve_image(source, options.cache)
    workdir = spec.environment.workdir or (plain.workdir if plain else image.workdir)
    env = {**(plain.env if plain else {}), **spec.environment.env}
    table: dict[str, Any] = {"image": _portable(source_text, source.location, source.kind)}
    if plain is not None and plain.setup:
        table[_SETUP_KEY] = list(plain.setup)
    if workdir and workdir != image.workdir:
        table["workdir"] = workdir
    if env:
        table["env"] = env
    _starting_files(image, workdir or "/", repo)
    for source_rel, dest_rel in plain.copies if plain else ():
        _copy_in(env_folder, source_rel, repo, dest_rel)
    return table, replace(image, workdir=workdir or image.workdir, env={**image.env, **env})


def _built(
    folder: Path, spec: HarborTaskFile, repo: Path, options: ImportOptions, why: str
) -> tuple[dict[str, Any], ImageRoot]:
    """A Dockerfile that needs a build: its folder goes with the task (the build context) and
    the image is built here, by buildah or podman, and again wherever the suite runs."""
    if builder() is None:
        raise HarborTaskError(
            f"its Dockerfile needs a build ({why}) and neither buildah nor podman is installed "
            "(Debian: apt-get install buildah); or build it and name the image in "
            "[environment] docker_image, or give it in the image map"
        )
    source = dockerfile_source(f"environment/{DOCKERFILE}", folder)
    try:
        image = resolve_image(source, options.cache)
    except ImageError as exc:
        raise HarborTaskError(f"its Dockerfile needs a build ({why}): {exc}") from None
    shutil.copytree(folder / "environment", repo.parent / "environment", symlinks=True)
    workdir = spec.environment.workdir or image.workdir
    table: dict[str, Any] = {"dockerfile": f"environment/{DOCKERFILE}"}
    if workdir != image.workdir:
        table["workdir"] = workdir
    if spec.environment.env:
        table["env"] = dict(spec.environment.env)
    _starting_files(image, workdir or "/", repo)
    env = {**image.env, **spec.environment.env}
    return table, replace(image, workdir=workdir or image.workdir, env=env)


def _portable(text: str, location: str, kind: str) -> str:
    # Local images are named by absolute path: the imported suite lives elsewhere.
    if kind in ("oci", "docker-archive") and not text.startswith(("oci:", "docker-archive:")):
        return f"{kind}:{location}"
    if kind == "oci" and text.startswith("oci:"):
        tag = text.rsplit(":", 1)[-1] if text.count(":") > 1 else ""
        return f"oci:{location}" + (f":{tag}" if tag else "")
    if kind == "docker-archive":
        return f"docker-archive:{location}"
    return text


def _starting_files(image: ImageRoot, workdir: str, repo: Path) -> None:
    inside = image.root / workdir.lstrip("/")
    if workdir not in ("", "/") and inside.is_dir() and not inside.is_symlink():
        shutil.copytree(inside, repo, symlinks=True)
        for path in [repo, *repo.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o600 | (0o100 if path.is_dir() else 0))
    else:
        repo.mkdir(parents=True, exist_ok=True)


def _copy_in(context: Path, source_rel: str, repo: Path, dest_rel: str) -> None:
    source = (context / source_rel).resolve()
    if not source.is_relative_to(context.resolve()) or not source.exists():
        raise HarborTaskError(f"its Dockerfile copies {source_rel}, not found in environment/")
    dest = repo / dest_rel if dest_rel else repo
    if source.is_dir():
        shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True)
    else:
        if dest_rel.endswith("/") or (dest.is_dir()):
            dest = dest / source.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)


def _task_toml(
    task_id: str,
    folder: Path,
    spec: HarborTaskFile,
    environment: dict[str, Any],
    options: ImportOptions,
) -> dict[str, Any]:
    metadata = spec.metadata.get("harnessdrive") if isinstance(spec.metadata, dict) else None
    threshold = options.threshold
    if threshold is None and isinstance(metadata, dict):
        value = metadata.get("threshold")
        threshold = float(value) if isinstance(value, (int, float)) else None
    protected = list(PROTECTED)
    if isinstance(metadata, dict) and isinstance(metadata.get("protected"), list):
        protected += [p for p in metadata["protected"] if isinstance(p, str) and p not in protected]
    grade: dict[str, Any] = {
        "kind": "harbor",
        "threshold": 1.0 if threshold is None else threshold,
        "timeout": spec.verifier.timeout_sec or _DEFAULT_VERIFIER_TIMEOUT,
        "protected": protected,
    }
    if spec.verifier.env:
        grade["env"] = dict(spec.verifier.env)
    limits: dict[str, Any] = {"agent_timeout": spec.agent.timeout_sec or _DEFAULT_AGENT_TIMEOUT}
    if spec.environment.memory_mb:
        limits["memory_mb"] = spec.environment.memory_mb
    if spec.environment.storage_mb:
        limits["disk_mb"] = spec.environment.storage_mb
    harbor: dict[str, Any] = {
        "name": spec.task.name or folder.name,
        "schema_version": spec.schema_version or spec.version or "",
        "allow_internet": spec.environment.allow_internet,
    }
    if spec.environment.cpus:
        harbor["cpus"] = spec.environment.cpus
    return {
        "id": task_id,
        "title": spec.task.description[:200] if spec.task.description else task_id,
        "prompt_file": "instruction.md",
        "repo": {"path": "repo"},
        "environment": environment,
        "grade": grade,
        "limits": limits,
        "metadata": {"harbor": harbor},
    }


def _safe_id(text: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")[:100]
    return cleaned or "task"


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]
