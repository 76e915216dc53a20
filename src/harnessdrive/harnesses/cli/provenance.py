"""The effective configuration of one CLI run, hashed so that two arms can be compared."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from urllib.parse import urlsplit

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


PER_TRIAL_PURPOSES = ("max_budget", "cost_limit")
"""Flags whose value legitimately differs between trials of one arm: the spend cap a trial is
handed is what is left of the run's, so it is left out of the configuration's hash."""
PER_TRIAL = "{per-trial}"


def run_setting(
    run: CliRun, launch: Launch, flags: FlagTable, skipped: Iterable[str] = ()
) -> RunSetting:
    """The hash of what ``launch`` and the files under the trial's HOME configure, and the
    permission flags in its command line. ``skipped``: HOME-relative files left out (logins)."""
    argv = per_trial_left_out(launch.argv, flags)
    neutral = _neutral(run)
    parts = _setting_parts(argv, launch, run.request.home, set(skipped), neutral)
    return RunSetting(
        config_hash=_config_hash(argv, launch, run.request.home, set(skipped), neutral),
        tools=_tools(run, launch, flags),
        config_parts=tuple(sorted(parts.items())),
    )


def per_trial_left_out(argv: Sequence[str], flags: FlagTable) -> list[str]:
    """``argv`` with the value of each per-trial flag (the spend cap left) made a placeholder."""
    per_trial = {flags[p] for p in PER_TRIAL_PURPOSES if p in flags}
    shown = list(argv)
    for index, word in enumerate(shown[:-1]):
        if word in per_trial:
            shown[index + 1] = PER_TRIAL
    return shown


def _neutral(run: CliRun) -> Callable[[str], str]:
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
        # A port of its own per trial: the address without its scheme may appear too.
        host = urlsplit(run.endpoint.url).netloc
        if host:
            swaps.append((host, "{endpoint-host}"))
    swaps.append((str(run.binary), "{binary}"))

    def neutral(text: str) -> str:
        for value, placeholder in swaps:
            if value:
                text = text.replace(value, placeholder)
        return text

    return neutral


def _config_hash(
    argv: Sequence[str],
    launch: Launch,
    home: Path,
    skipped: set[str],
    neutral: Callable[[str], str],
) -> str:
    digest = hashlib.sha256()
    for word in argv:
        digest.update(b"argv\0" + neutral(word).encode() + b"\0")
    for key in sorted(launch.env):
        digest.update(f"env\0{key}={neutral(launch.env[key])}\0".encode())
    for rel, text in _home_texts(home, skipped):
        digest.update(f"file\0{rel}\0".encode() + neutral(text).encode() + b"\0")
    return digest.hexdigest()[:16]


def _setting_parts(
    argv: Sequence[str],
    launch: Launch,
    home: Path,
    skipped: set[str],
    neutral: Callable[[str], str],
) -> dict[str, str]:
    """Each setting the hash covers, by name (``--model``, ``env FOO``, ``file .x/y.json``),
    with a short hash of its value: where two hashes differ, these name the setting."""
    values: dict[str, str] = {}
    words = list(argv)
    index = 1  # the binary is a path, named apart
    while index < len(words):
        word = words[index]
        following = words[index + 1] if index + 1 < len(words) else None
        if word.startswith("-") and following is not None and not following.startswith("-"):
            name, value, index = word, following, index + 2
        else:
            name = word if word.startswith("-") else f"argument {index}"
            value, index = "", index + 1
        while name in values:
            name += "'"
        values[name] = value
    for key in launch.env:
        values[f"env {key}"] = launch.env[key]
    for rel, text in _home_texts(home, skipped):
        values[f"file {rel}"] = text
    return {
        name: hashlib.sha256(neutral(value).encode()).hexdigest()[:8]
        for name, value in values.items()
    }


def _home_texts(home: Path, skipped: set[str]) -> list[tuple[str, str]]:
    texts = []
    for rel, path in _home_files(home):
        if rel in skipped:
            continue
        try:
            texts.append((rel, path.read_bytes().decode("utf-8", "replace")))
        except OSError:
            continue
    return texts


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
