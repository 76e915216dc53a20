"""The effective configuration of one CLI run, hashed so that two arms can be compared."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from harnessdrive.harnesses.cli.cli_run import CliRun, Launch
from harnessdrive.harnesses.cli.flags import FlagTable
from harnessdrive.harnesses.provenance import RunSetting

# Flags that grant or withhold tools and approvals, by their purpose in an adapter's table.
PERMISSION_PURPOSES = (
    "permission_mode",
    "allowed_tools",
    "skip_permissions",
    "approval_mode",
    "sandbox",
    "bypass",
    "yolo",
)


def run_setting(
    run: CliRun, launch: Launch, flags: FlagTable, skipped: Iterable[str] = ()
) -> RunSetting:
    """The hash of what ``launch`` and the files under the trial's HOME configure, and the
    permission flags in its command line. ``skipped``: HOME-relative files left out (logins)."""
    return RunSetting(
        config_hash=_config_hash(run, launch, set(skipped)), tools=_tools(run, launch, flags)
    )


def _config_hash(run: CliRun, launch: Launch, skipped: set[str]) -> str:
    request = run.request
    swaps = [
        (str(run.prompt_file), "{prompt}"),
        (str(request.workspace), "{workspace}"),
        (str(request.home), "{home}"),
        (str(request.tmp), "{tmp}"),
        (str(request.logs), "{logs}"),
        (run.session_id, "{session}"),
    ]
    if run.endpoint is not None:
        swaps += [(run.endpoint.url, "{endpoint}"), (run.endpoint.api_key, "{key}")]
    swaps.append((str(run.binary), "{binary}"))

    def neutral(text: str) -> str:
        for value, placeholder in swaps:
            if value:
                text = text.replace(value, placeholder)
        return text

    digest = hashlib.sha256()
    for word in launch.argv:
        digest.update(b"argv\0" + neutral(word).encode() + b"\0")
    for key in sorted(launch.env):
        digest.update(f"env\0{key}={neutral(launch.env[key])}\0".encode())
    for rel, path in _home_files(request.home):
        if rel in skipped:
            continue
        try:
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        digest.update(f"file\0{rel}\0".encode() + neutral(text).encode() + b"\0")
    return digest.hexdigest()[:16]


def _home_files(home: Path) -> list[tuple[str, Path]]:
    found = []
    for root, dirs, names in os.walk(home):
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            if path.is_file() and not path.is_symlink():
                found.append((path.relative_to(home).as_posix(), path))
    return found


def _tools(run: CliRun, launch: Launch, flags: FlagTable) -> tuple[str, ...]:
    wanted = {flags[p]: p for p in PERMISSION_PURPOSES if p in flags}
    shown = [f"permissions={run.options.permissions}"]
    argv = launch.argv
    for index, word in enumerate(argv):
        if word not in wanted:
            continue
        following = argv[index + 1] if index + 1 < len(argv) else ""
        takes_value = following and not following.startswith("-")
        shown.append(f"{word} {following}" if takes_value else word)
    return tuple(shown)
