"""Read-only git calls on the user's repository.

The repository is only read. Our calls ignore the system config, run no pager, external diff
or text conversion, never prompt, never fetch, never take optional locks, and take paths
literally. Settings in the user's own config that would change what we parse (colour, prefixes,
relative diffs, signatures, submodule summaries) are overridden on the command line; the
repository's config is otherwise only read for what git itself needs (object format,
extensions, shallow and partial-clone markers).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from harnessdrive.errors import UserError

# Overrides for settings that would change the output we parse or make git run a program.
_CONFIG_OVERRIDES: tuple[str, ...] = (
    "core.quotepath=off",
    "core.fsmonitor=false",
    "core.attributesFile=" + os.devnull,
    "color.ui=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "diff.submodule=short",
    "diff.renames=false",
    "log.showSignature=false",
    "log.showRoot=false",
    "log.decorate=false",
    "i18n.logOutputEncoding=UTF-8",
)

# Variables that would point git at another repository, config or object store.
_REDIRECTING_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_PAGER",
    "GIT_REPLACE_REF_BASE",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
)


def git_env() -> dict[str, str]:
    """This process's environment, made safe for reading a repository we do not own."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in _REDIRECTING_VARIABLES
        and not key.startswith("GIT_CONFIG_KEY_")
        and not key.startswith("GIT_CONFIG_VALUE_")
    }
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_ATTR_NOSYSTEM="1",
        GIT_PAGER="cat",
        PAGER="cat",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_LITERAL_PATHSPECS="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_NO_LAZY_FETCH="1",  # git 2.44+: a partial clone never reaches the network
        LC_ALL="C",
    )
    return env


def git_command(repo: Path, args: Sequence[str | bytes]) -> list[str | bytes]:
    overrides: list[str | bytes] = []
    for setting in _CONFIG_OVERRIDES:
        overrides += ["-c", setting]
    return ["git", "--no-pager", "-C", str(repo), *overrides, *args]


def run_git(repo: Path, args: Sequence[str | bytes], *, stdin: bytes | None = None) -> bytes:
    """Run one git command and return its output; a failure is a UserError with git's words."""
    result = subprocess.run(
        git_command(repo, args),
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        env=git_env(),
        check=False,
    )
    if result.returncode != 0:
        raise UserError(_failure(repo, args, result.stderr))
    return result.stdout


def git_result(repo: Path, args: Sequence[str | bytes]) -> subprocess.CompletedProcess[bytes]:
    """The whole result of one git command, failure included."""
    return subprocess.run(
        git_command(repo, args),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=git_env(),
        check=False,
    )


def try_git(repo: Path, args: Sequence[str | bytes]) -> bytes | None:
    """Like run_git, but None when git fails (for questions whose answer may be "no")."""
    result = git_result(repo, args)
    return result.stdout if result.returncode == 0 else None


def stream_git(
    repo: Path, args: Sequence[str | bytes], *, chunk_size: int = 1 << 16
) -> Iterator[bytes]:
    """Yield git's output in chunks as it is produced; a failure raises after the output."""
    # stderr goes to a file: a pipe nobody reads while stdout streams could fill and stall git.
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            git_command(repo, args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=git_env(),
        )
        assert process.stdout is not None
        try:
            while chunk := os.read(process.stdout.fileno(), chunk_size):
                yield chunk
            if process.wait() != 0:
                errors.seek(0)
                raise UserError(_failure(repo, args, errors.read()))
        finally:
            # A consumer that stops early (or an error) must not leave git running.
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()


def _failure(repo: Path, args: Sequence[str | bytes], stderr: bytes) -> str:
    command = args[0] if isinstance(args[0], str) else os.fsdecode(args[0])
    message = " ".join(stderr.decode("utf-8", "replace").split()) or "no message"
    return f"git {command} failed in {repo}: {message}"
