"""Which suite a trial belongs to, and which version of it.

Two suites may share a name (mined suites are named after their repository), so the name alone
cannot key results. A suite's identity is its name plus a short hash of its folder's resolved
path:

- the same folder run again is the same suite, and resumes;
- an edited task keeps the suite's identity; the task's own fingerprint decides whether its
  trials run again;
- a suite mined again into the same folder is the same suite; only the tasks that changed run
  again;
- a moved or copied folder is another suite (its tasks' fingerprints, which hold the repository
  path, change with it anyway).

The version hashes what the suite holds (its spec and every task's fingerprint), so a report can
say when one run's trials come from more than one version of the suite.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from harnessdrive.tasks.loading import Suite

ID_SEPARATOR = "@"
"""Never in a suite name (``ID_PATTERN``), so an identity cannot be mistaken for a bare name."""


def suite_id(name: str, folder: Path) -> str:
    """``<name>@<8 hex digits of the folder's resolved path>``."""
    digest = hashlib.sha256(os.fsencode(str(Path(folder).resolve()))).hexdigest()[:8]
    return f"{name}{ID_SEPARATOR}{digest}"


def suite_identity(suite: Suite) -> str:
    return suite_id(suite.name, suite.folder)


def suite_version(suite: Suite) -> str:
    """Changes whenever the suite's spec or any of its tasks changes."""
    digest = hashlib.sha256(suite.spec.model_dump_json().encode())
    for task in suite.tasks:
        digest.update(f"\0{task.id}\0{task.fingerprint}".encode())
    return digest.hexdigest()[:12]


@cache
def harnessdrive_version() -> str:
    try:
        return version("harnessdrive")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"
