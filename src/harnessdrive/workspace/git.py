"""Our own git calls, hardened against the repositories they read.

A workspace is hostile data once an agent has touched it, and a user's repository may carry hooks,
filters and config of its own. Every call here ignores system and global config, runs no hooks,
no pager, no fsmonitor, no external diff or textconv, and answers no prompt.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from harnessdrive.errors import WorkspaceError

# Deterministic identity for commits we make, so the same files give the same commit.
IDENTITY = {
    "GIT_AUTHOR_NAME": "harnessdrive",
    "GIT_AUTHOR_EMAIL": "harnessdrive@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "harnessdrive",
    "GIT_COMMITTER_EMAIL": "harnessdrive@localhost",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}

_SAFE_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.quotepath=off",
    "core.pager=cat",
    "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null",
    "safe.directory=*",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "advice.detachedHead=false",
    "init.defaultBranch=main",
    "diff.renames=false",
    "protocol.allow=never",
    "uploadpack.packObjectsHook=",
)


def _base_env() -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "HOME")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_ATTR_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_PAGER="cat",
        LC_ALL="C",
    )
    return env


_ENV = _base_env()


def git(
    *args: str,
    cwd: Path | None = None,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
    check: bool = True,
) -> bytes:
    """Run git with hardened settings and return its stdout."""
    result = run_git(args, cwd=cwd, git_dir=git_dir, work_tree=work_tree, env=env, input=input)
    if check and result.returncode != 0:
        raise git_failed(args[0], result.returncode, result.stderr)
    return result.stdout


def git_failed(command: str, code: int, stderr: bytes) -> WorkspaceError:
    """The error for a git call that failed: its last line on stderr, else its exit status."""
    lines = stderr.decode(errors="replace").strip().splitlines()
    return WorkspaceError(f"git {command} failed: {lines[-1] if lines else f'exit {code}'}")


def git_head(
    *args: str, limit: int, git_dir: Path | None = None, cwd: Path | None = None
) -> tuple[bytes, int]:
    """Run git and keep only the first ``limit`` bytes of its stdout: (those bytes, total size).

    The rest is read and dropped as it arrives, so a huge output never sits in memory.
    """
    with tempfile.TemporaryFile() as errors:
        proc = start_git(args, git_dir=git_dir, cwd=cwd, stdin=subprocess.DEVNULL, stderr=errors)
        assert proc.stdout is not None
        kept = bytearray()
        total = 0
        with proc.stdout:
            while chunk := proc.stdout.read(1024 * 1024):
                total += len(chunk)
                if len(kept) < limit:
                    kept += chunk[: limit - len(kept)]
        if proc.wait() != 0:
            errors.seek(0)
            raise git_failed(args[0], proc.returncode, errors.read(64 * 1024))
    return bytes(kept), total


def start_git(
    args: Sequence[str],
    *,
    git_dir: Path | None = None,
    cwd: Path | None = None,
    stdin: int | IO[bytes] | None = subprocess.PIPE,
    stdout: int | IO[bytes] | None = subprocess.PIPE,
    stderr: int | IO[bytes] | None = None,
) -> subprocess.Popen[bytes]:
    """Start git with hardened settings, for a caller that streams its input or output."""
    try:
        return subprocess.Popen(
            git_argv(args, git_dir, None),
            cwd=cwd,
            env=_ENV,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
        )
    except OSError as exc:
        raise WorkspaceError(f"cannot run git: {exc}") from exc


def git_argv(args: Sequence[str], git_dir: Path | None, work_tree: Path | None) -> list[str]:
    argv = ["git"]
    for setting in _SAFE_CONFIG:
        argv += ["-c", setting]
    if git_dir is not None:
        argv.append(f"--git-dir={git_dir}")
    if work_tree is not None:
        argv.append(f"--work-tree={work_tree}")
    return argv + list(args)


def run_git(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    argv = git_argv(args, git_dir, work_tree)
    full_env = dict(_ENV)
    if env:
        full_env.update(env)
    try:
        return subprocess.run(
            argv,
            cwd=cwd,
            env=full_env,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        raise WorkspaceError(f"cannot run git: {exc}") from exc
