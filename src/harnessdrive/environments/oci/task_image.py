"""A task's image, resolved to its unpacked root (once per digest, in the shared cache)."""

from __future__ import annotations

from dataclasses import replace

from harnessdrive.environments.oci.cache import ImageCache, resolve_image
from harnessdrive.environments.oci.sources import ImageSource, dockerfile_source, parse_image
from harnessdrive.errors import ImageError
from harnessdrive.sandbox.image_root import ImageRoot
from harnessdrive.tasks.loading import Task


def task_image_source(task: Task) -> ImageSource | None:
    spec = task.spec.environment
    if spec is None:
        return None
    try:
        if spec.dockerfile is not None:
            return dockerfile_source(spec.dockerfile, task.folder)
        return parse_image(spec.image or "", task.folder)
    except ImageError as exc:
        raise ImageError(f"task {task.id}: {exc}") from None


def task_image(task: Task, cache: ImageCache | None = None) -> ImageRoot | None:
    """The unpacked root of ``task``'s image; None for a task on the host's system. Errors
    name the task."""
    source = task_image_source(task)
    if source is None:
        return None
    try:
        root = resolve_image(source, cache)
    except ImageError as exc:
        raise ImageError(f"task {task.id}: {exc}") from None
    spec = task.spec.environment
    assert spec is not None
    return replace(root, workdir=spec.workdir or root.workdir, env={**root.env, **spec.env})
