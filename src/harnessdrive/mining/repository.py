"""Questions about the user's repository asked before its history is read."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from harnessdrive.errors import UserError
from harnessdrive.mining.gitread import git_result, run_git, try_git

_TRUE = {"true", "yes", "on", "1"}


def repository_root(path: str | os.PathLike[str]) -> Path:
    """The top folder of the repository holding ``path`` (the git folder for a bare one)."""
    path = Path(path)
    found = git_result(path, ["rev-parse", "--show-toplevel"])
    if found.returncode == 0:
        return Path(os.fsdecode(found.stdout.rstrip(b"\n")))
    # A bare repository has no top folder; its git folder stands in for it.
    if try_git(path, ["rev-parse", "--is-bare-repository"]) == b"true\n":
        return Path(os.fsdecode(run_git(path, ["rev-parse", "--absolute-git-dir"]).rstrip(b"\n")))
    reason = found.stderr.decode("utf-8", "replace")
    if not path.is_dir() or "not a git repository" in reason:
        raise UserError(f"{path} is not a git repository")
    # Anything else (a repository owned by someone else, a damaged one): git's own words.
    raise UserError(f"{path} cannot be read as a git repository: {' '.join(reason.split())}")


def locate(path: str | os.PathLike[str]) -> tuple[Path, str, bool]:
    """(top folder, HEAD sha, shallow?) in one git call; the slower questions explain a failure."""
    question = ["rev-parse", "--show-toplevel", "--is-shallow-repository", "HEAD^{commit}"]
    found = try_git(Path(path), question)
    if found is not None:
        # rsplit: a folder name may hold a newline.
        top, shallow, head = found.rstrip(b"\n").rsplit(b"\n", 2)
        return Path(os.fsdecode(top)), head.decode("ascii"), shallow == b"true"
    root = repository_root(path)
    return root, head_commit(root), is_shallow(root)


def resolve_revision(root: Path, rev: str) -> tuple[str, datetime]:
    """(sha, commit date) of ``rev`` (a branch, tag or sha); a UserError when there is none."""
    if not rev.strip() or rev.startswith("-"):
        raise UserError(f"{rev!r} is not a revision")
    found = try_git(root, ["log", "-1", "--format=%H %cI", f"{rev}^{{commit}}", "--"])
    if not found:
        raise UserError(f"{root} has no revision {rev!r} (give a branch, a tag or a commit)")
    sha, _, when = found.decode("ascii", "replace").strip().partition(" ")
    return sha, datetime.fromisoformat(when)


def head_commit(root: Path) -> str:
    found = try_git(root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
    if not found:
        raise UserError(f"{root} has no commits yet")
    return found.decode("ascii").strip()


def is_shallow(root: Path) -> bool:
    return run_git(root, ["rev-parse", "--is-shallow-repository"]).strip() == b"true"


def promisor_remotes(root: Path) -> list[str]:
    """Remotes that keep objects on the server for a partial clone (``git clone --filter``)."""
    pattern = r"^(remote\..*\.promisor|extensions\.partialclone)$"
    listing = try_git(root, ["config", "--local", "-z", "--get-regexp", pattern]) or b""
    remotes: list[str] = []
    for entry in listing.split(b"\0"):
        key, _, value = entry.decode("utf-8", "replace").partition("\n")
        if key == "extensions.partialclone" and value.strip():
            remotes.append(value.strip())
        elif key.endswith(".promisor") and value.strip().lower() in _TRUE:
            remotes.append(key[len("remote.") : -len(".promisor")])
    return list(dict.fromkeys(remotes))


def refuse_partial_clone(root: Path) -> None:
    """A partial clone lacks old file contents, and mining never fetches: stop with the fix."""
    remotes = promisor_remotes(root)
    if not remotes:
        return
    remote = remotes[0]
    raise UserError(
        f"{root} is a partial clone: remote {remote!r} keeps old file contents on the server, "
        "and mining fetches nothing. Fetch the full history first: "
        f"git config --unset remote.{remote}.partialclonefilter && "
        f"git fetch --refetch {remote} && git config --unset remote.{remote}.promisor"
    )
