"""The visible dev set ``cases build --dev N`` writes into the task's repository.

Its cases are ones the hidden set left unused, with their answers. Their rule tags (and the
bucket each would fill, which names a rule too) would tell the agent the names of rules the
README never mentions, so they are left out unless the task sets ``dev_tags``. When the
repository is a git repository the agent gets it as committed, so the dev files are committed
there; when that fails, the build says how to do it by hand.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harnessdrive.errors import UserError

BASE_BUCKET = "base"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "harnessdrive",
    "GIT_AUTHOR_EMAIL": "harnessdrive@localhost",
    "GIT_COMMITTER_NAME": "harnessdrive",
    "GIT_COMMITTER_EMAIL": "harnessdrive@localhost",
}


class DevSetError(UserError):
    """The dev set cannot be written or committed."""


def real_bucket(rules: Sequence[str], order: Sequence[str]) -> str:
    """The bucket a case belongs to by its tags: its one rule, ``base`` when it has none, the
    first in the oracle's order when it has several."""
    if not rules:
        return BASE_BUCKET
    return min(rules, key=lambda rule: order.index(rule) if rule in order else len(order))


def dev_lines(rows: Sequence[dict[str, Any]], order: Sequence[str], *, tags: bool) -> list[str]:
    """Each dev row as a JSON line: id, input, expected and, with ``tags``, its rules, its
    real bucket and whether it is isolated."""
    lines = []
    for row in rows:
        shown: dict[str, Any] = {k: row[k] for k in ("id", "input", "expected")}
        if tags:
            shown["rules"] = list(row.get("rules") or ())
            shown["bucket"] = real_bucket(shown["rules"], order)
            shown["isolated"] = bool(row.get("isolated"))
        lines.append(json.dumps(shown, sort_keys=True))
    return lines


def write_dev_set(
    repo: Path,
    relative: str,
    rows: Sequence[dict[str, Any]],
    meta: dict[str, Any],
    order: Sequence[str],
    *,
    tags: bool,
) -> Path:
    """Write the dev set (and its meta file) into ``repo`` and commit them when ``repo`` is a
    git repository."""
    path = repo / relative
    meta_file = path.with_name(path.name.removesuffix(".jsonl") + ".meta.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(dev_lines(rows, order, tags=tags)) + "\n", encoding="utf-8")
    if tags:
        buckets: dict[str, int] = {}
        for row in rows:
            bucket = real_bucket(list(row.get("rules") or ()), order)
            buckets[bucket] = buckets.get(bucket, 0) + 1
        meta = {**meta, "buckets": buckets}
    else:
        meta = {k: v for k, v in meta.items() if k not in ("buckets", "isolated", "composes")}
    meta_file.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if (repo / ".git").exists():
        _commit(repo, [path, meta_file])
    return path


def _commit(repo: Path, paths: list[Path]) -> None:
    names = [str(p.relative_to(repo)) for p in paths]
    fix = (
        f"the dev set is written but not committed, so the agent would not get it; commit it in "
        f"the task's repository: git -C {repo} add {' '.join(names)} && git -C {repo} commit"
    )
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(repo), **GIT_IDENTITY}
    for argv in (
        ["git", "-C", str(repo), "add", "--", *names],
        ["git", "-C", str(repo), "commit", "-q", "-m", "dev cases", "--", *names],
    ):
        try:
            done = subprocess.run(argv, capture_output=True, env=env, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired):
            raise DevSetError(fix) from None
        if done.returncode != 0 and b"nothing to commit" not in done.stdout + done.stderr:
            raise DevSetError(fix)
