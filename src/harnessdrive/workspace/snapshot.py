"""The base state of a task, built once and copied for every trial and every grading.

A snapshot folder holds the task's starting files committed once as a brand-new git repository
(never a worktree, so later history, branches, stash, hooks and config of the user's repository
are out of reach). Beside it lies a bare *shadow* repository that borrows the snapshot's objects;
our diffs and grading copies are computed there, so nothing an agent does to its own ``.git`` can
change what we see.

    <dest>/
      base/         the files, plus .git with one commit
      shadow.git/   bare; objects/info/alternates -> base/.git/objects
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import WorkspaceError
from harnessdrive.workspace.blobs import LazyBlobs, blob_reader
from harnessdrive.workspace.git import IDENTITY, git, run_git
from harnessdrive.workspace.ignore import exclude_file_text, is_cache_name
from harnessdrive.workspace.placing import prepare_path
from harnessdrive.workspace.tree_import import ListedTree, import_tree, listed_tree

# In-tree attributes must not transform content between disk and our objects.
_NEUTRAL_ATTRIBUTES = "* -text -ident -filter -working-tree-encoding\n"


@dataclass(frozen=True)
class Snapshot:
    root: Path
    """The base files with their one-commit ``.git``; copied, never handed out."""
    shadow: Path
    """Bare git dir sharing the base objects, for diffs of hostile workspaces."""
    commit: str
    tree: str
    source: str
    """Where the files came from, for the record: ``git <path>@<sha>`` or ``folder <path>``."""
    files: int = 0
    """How many files it holds (copies of small snapshots are made in-process)."""


def source_key(repo_path: Path, ref: str | None) -> str:
    """A cheap identity of a task's starting files: equal keys give equal snapshots.

    For a git repository, the resolved commit; for a plain folder, every file's path, size,
    mode and modification time. Tasks of one project share one snapshot this way.
    """
    digest = hashlib.sha256()
    if is_git_source(repo_path, ref):
        top, commit, prefix = _resolve(repo_path, ref or "HEAD")
        digest.update(f"git\0{top}\0{commit}\0{prefix}".encode())
    else:
        digest.update(f"folder\0{repo_path}".encode())
        for path, is_dir in folder_entries(repo_path):
            info = path.lstat()
            rel = path.relative_to(repo_path).as_posix()
            digest.update(
                f"\0{rel}\0{is_dir}\0{info.st_size}\0{info.st_mode}\0{info.st_mtime_ns}".encode()
            )
    return digest.hexdigest()[:20]


def unreadable_sources(
    sources: Iterable[tuple[Path, str | None]],
) -> dict[tuple[Path, str | None], str]:
    """Why each git source that cannot be read fails, checked before any trial: one ``git``
    call per repository for all of its refs, so a mined suite of many commits checks fast."""
    refs: dict[Path, list[str | None]] = {}
    for repo_path, ref in sources:
        if is_git_source(repo_path, ref) and ref not in refs.setdefault(repo_path, []):
            refs[repo_path].append(ref)
    problems: dict[tuple[Path, str | None], str] = {}
    for repo_path, wanted in refs.items():
        for ref in [r for r in wanted if r is not None and ("\n" in r or not r.strip())]:
            problems[(repo_path, ref)] = f"not a usable ref: {ref!r}"
            wanted.remove(ref)
    for repo_path, wanted in refs.items():
        if (
            not repo_path.is_dir()
            or not git("rev-parse", "--show-toplevel", cwd=repo_path, check=False).strip()
        ):
            problems.update(
                {(repo_path, ref): f"not a git repository: {repo_path}" for ref in wanted}
            )
            continue
        lines = "".join(f"{ref or 'HEAD'}^{{commit}}\n" for ref in wanted).encode()
        found = git("cat-file", "--batch-check", cwd=repo_path, input=lines).splitlines()
        for ref, line in zip(wanted, found, strict=True):
            if line.endswith(b" missing"):
                problems[(repo_path, ref)] = f"{ref or 'HEAD'!r} names no commit in {repo_path}"
    return problems


def build_snapshot(repo_path: Path, ref: str | None, dest: Path) -> Snapshot:
    """Materialise the task's base state under ``dest`` (which must not exist yet).

    A build that fails leaves nothing behind, so the next attempt starts clean.
    """
    try:
        return _build(repo_path, ref, dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _build(repo_path: Path, ref: str | None, dest: Path) -> Snapshot:
    root = dest / "base"
    root.mkdir(parents=True)
    version_tag = None
    listed: ListedTree | None = None
    git("init", "-q", "--template=", str(root))
    _write_info(root / ".git")
    if is_git_source(repo_path, ref):
        top, commit_id, prefix = _resolve(repo_path, ref or "HEAD")
        treeish = commit_id if prefix == "." else f"{commit_id}:{prefix}"
        listed = listed_tree(Path(top), treeish)
        if listed is not None:
            import_tree(Path(top), listed, root)
        else:
            write_tree_files(Path(top), treeish, root)
        where = top if prefix == "." else f"{top}/{prefix}"
        source = f"git {where}@{commit_id}"
        version_tag = _nearest_tag(repo_path, ref or "HEAD")
    else:
        _copy_folder(repo_path, root)
        source = f"folder {repo_path}"
    if listed is None:
        git("add", "-A", "-f", "--", ".", cwd=root)
        tree = git("write-tree", cwd=root).decode().strip()
    else:
        tree = listed.tree
    commit = git("commit-tree", tree, "-m", "base", cwd=root, env=IDENTITY).decode().strip()
    git("update-ref", "--no-deref", "refs/heads/main", commit, cwd=root)
    if version_tag is not None:
        # Projects that take their version from git (setuptools-scm and the like) test it.
        git("update-ref", "--no-deref", f"refs/tags/{version_tag}", commit, cwd=root)
    _compact(root / ".git", repack=listed is None)
    shadow = dest / "shadow.git"
    git("init", "-q", "--bare", "--template=", str(shadow))
    (shadow / "objects" / "info").mkdir(parents=True, exist_ok=True)
    (shadow / "objects" / "info" / "alternates").write_text(str(root / ".git" / "objects") + "\n")
    _write_info(shadow)
    if listed is None:
        files = len(git("ls-files", "-z", cwd=root).split(b"\0")) - 1
    else:
        files = listed.files
    return Snapshot(root=root, shadow=shadow, commit=commit, tree=tree, source=source, files=files)


def _nearest_tag(repo_path: Path, ref: str) -> str | None:
    """The newest tag the commit descends from, so a copy's ``git describe`` names it too."""
    found = git(
        "describe", "--tags", "--abbrev=0", "--end-of-options", ref, cwd=repo_path, check=False
    )
    name = found.decode(errors="replace").strip()
    if not name or run_git(["check-ref-format", f"refs/tags/{name}"]).returncode != 0:
        return None
    return name


def _compact(git_dir: Path, *, repack: bool) -> None:
    """Pack the objects (unless they came as one pack) and drop what a fresh repository does
    not need.

    Every copy of the snapshot carries this ``.git``; one pack instead of a folder per object
    prefix makes copying and deleting a workspace much cheaper.
    """
    if repack:
        git("repack", "-a", "-d", "-n", "-q", "--no-write-bitmap-index", git_dir=git_dir)
        git("prune-packed", "-q", git_dir=git_dir)
    for name in ("logs", "branches", "description", "COMMIT_EDITMSG"):
        target = git_dir / name
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)


def _write_info(git_dir: Path) -> None:
    info = git_dir / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text(_NEUTRAL_ATTRIBUTES)
    (info / "exclude").write_text(exclude_file_text())


def is_git_source(repo_path: Path, ref: str | None) -> bool:
    """A task's files come from git (a ref, or a repository's HEAD), not from a plain folder."""
    return ref is not None or (repo_path / ".git").exists()


def _resolve(repo_path: Path, ref: str) -> tuple[str, str, str]:
    """(toplevel, commit, prefix of repo_path inside it)."""
    top = git("rev-parse", "--show-toplevel", cwd=repo_path, check=False).decode().strip()
    if not top:
        raise WorkspaceError(f"not a git repository: {repo_path}")
    if git("config", "--get", "extensions.partialClone", cwd=repo_path, check=False).strip():
        raise WorkspaceError(
            f"{top} is a partial clone; old file contents are not here. "
            "Fetch the full history first: git fetch --refetch"
        )
    commit = git("rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}", cwd=repo_path)
    prefix = Path(repo_path).resolve().relative_to(Path(top).resolve()).as_posix()
    return top, commit.decode().strip(), prefix


def write_tree_files(repo: Path, treeish: str, root: Path) -> None:
    """Write every file of ``treeish`` under ``root``: blobs as they are, no filters.

    Submodules (gitlinks) are left out; LFS files arrive as their pointer files. A path that
    leaves the tree is refused and a link never written through, however the tree was crafted
    (a link ``lib`` beside a folder ``lib``, say).
    """
    listing = git("ls-tree", "-r", "-z", "--full-tree", treeish, cwd=repo)
    entries: list[tuple[str, str, bytes]] = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, sha = meta.decode().split(" ")
        if kind == "blob":
            entries.append((mode, sha, path))
    # One blob at a time, in chunks: a large repository never sits in memory.
    with blob_reader(cwd=repo) as blobs:
        for mode, sha, raw_path in entries:
            rel = raw_path.decode("utf-8", "surrogateescape")
            if ".git" in rel.lower().split("/"):
                raise WorkspaceError(f"refusing a tree entry inside .git: {rel!r}")
            target = prepare_path(root, rel)
            if mode == "120000":
                link = io.BytesIO()
                blobs.copy(sha, link)
                os.symlink(link.getvalue(), os.fsencode(target))
            else:
                with target.open("wb") as handle:
                    blobs.copy(sha, handle)
                if mode == "100755":
                    target.chmod(0o755)


def read_blobs(repo: Path, shas: set[str], *, git_dir: Path | None = None) -> Mapping[str, bytes]:
    """The blobs ``shas`` by id, each read when it is looked up (and at most its first 16 MiB).

    Nothing is kept: however many there are, one sits in memory at a time.
    """
    return LazyBlobs(frozenset(shas), git_dir=git_dir, cwd=None if git_dir is not None else repo)


def folder_entries(source: Path) -> Iterator[tuple[Path, bool]]:
    """Every file, link and folder of a plain folder, minus ``.git`` and tool caches.

    Yields (path, is_dir); links are never followed and come back as files.
    """
    for dirpath, dirnames, filenames in os.walk(source):
        kept = []
        for name in sorted(dirnames):
            full = Path(dirpath) / name
            if name == ".git" or is_cache_name(name, is_dir=True):
                continue
            if full.is_symlink():
                yield full, False
            else:
                kept.append(name)
                yield full, True
        dirnames[:] = kept
        for name in sorted(filenames):
            if not is_cache_name(name, is_dir=False):
                yield Path(dirpath) / name, False


def _copy_folder(source: Path, root: Path) -> None:
    """Copy a plain folder's files, leaving out ``.git`` and tool caches."""
    for path, is_dir in folder_entries(source):
        target = root / path.relative_to(source)
        if is_dir:
            target.mkdir(parents=True, exist_ok=True)
        elif path.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.readlink(path), target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            if path.stat().st_mode & stat.S_IXUSR:
                target.chmod(0o755)
