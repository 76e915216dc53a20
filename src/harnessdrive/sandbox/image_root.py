"""An image's unpacked root file system as the system a bubblewrap sandbox shows.

On the host, a sandbox sees the host's system folders read-only. With an :class:`ImageRoot` it
sees the image's instead: each top-level entry of the unpacked root bound read-only (links stay
links), so the process runs on the image's libraries, programs and ``/etc``. Everything else is
as on the host: the workspace, private HOME and /tmp, the tool folders of the CLI and of our own
interpreter (bound read-only from the host at their own paths), the covers, limits, network and
tree kill. The command's folder is also shown at the image's working folder, where the image
expects its work to be.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# Entries of an image root that the sandbox makes itself (or that must never come from a file).
_MADE_BY_SANDBOX = frozenset({"proc", "dev", "tmp", "sys", "run"})


@dataclass(frozen=True)
class ImageRoot:
    """An unpacked image: where its root lies, and what its config asks of a process."""

    root: Path
    """The unpacked, read-only root file system (one per image digest)."""
    digest: str
    """The image's manifest digest (``sha256:...``)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The image's environment (``Env`` of its config); PATH included."""
    workdir: str = "/"
    """The image's working folder (``WorkingDir``); ``/`` when it names none."""
    user: str = ""
    """The image's ``User``: the user inside unless it is root (:meth:`user_ids`)."""

    def system_argv(self, inside: Iterable[str] = ()) -> list[str]:
        """bwrap options that show the image's root as the system. ``inside``: the paths other
        binds go to; a folder of the image holding one of them (``/root`` for a tool under the
        host's ``/root``) is made afresh and its entries bound one by one, so the bind finds a
        place to go."""
        needed = tuple(sorted({os.path.normpath(p) for p in inside if p.startswith("/")}))
        return list(_root_argv(self.root, needed))

    def workdir_argv(self, cwd: Path, others: Iterable[str] = ()) -> list[str]:
        """Show ``cwd`` (writable, as it was bound) again at the image's working folder and
        start there. Start at ``cwd`` itself when the image names no working folder, or when
        showing it there would hide another bind (``others``: a tool folder under it)."""
        workdir = os.path.normpath(self.workdir or "/")
        hides = any(o == workdir or o.startswith(workdir + "/") for o in others)
        if workdir == "/" or not workdir.startswith("/") or hides:
            return ["--chdir", os.path.abspath(cwd)]
        return ["--bind", os.path.abspath(cwd), workdir, "--chdir", workdir]

    def user_ids(self) -> tuple[int, int] | None:
        """The uid and gid of the image's ``User`` (a name or number, ``user[:group]``, looked
        up in the image's own passwd and group files); None when it names none, names root, or
        names one that cannot be found: the sandbox user then stays ours."""
        if not self.user:
            return None
        name, _, group = self.user.partition(":")
        uid = _lookup(self.root / "etc" / "passwd", name, 2)
        if uid is None or uid == 0:
            return None
        gid = _lookup(self.root / "etc" / "group", group, 2) if group else None
        if gid is None:
            gid = _primary_gid(self.root / "etc" / "passwd", uid)
        return uid, uid if gid is None else gid

    def passwd_text(self) -> str:
        """The image's own passwd file, to which the sandbox user is added."""
        try:
            return (self.root / "etc" / "passwd").read_text(errors="replace")
        except OSError:
            return ""

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """A process's environment inside the image: the image's variables where the process's
        own do not set them, and PATH the process's (its tool folders first) then the image's."""
        merged = {**self.env, **env}
        own = [p for p in env.get("PATH", "").split(os.pathsep) if p]
        image_path = self.env.get("PATH", _DEFAULT_PATH).split(os.pathsep)
        merged["PATH"] = os.pathsep.join(dict.fromkeys([*own, *(p for p in image_path if p)]))
        return merged


_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@functools.lru_cache(maxsize=64)
def _root_argv(root: Path, needed: tuple[str, ...]) -> tuple[str, ...]:
    # A root never changes once unpacked (it is named by its digest): its listing is kept.
    return tuple(_entries_argv(root, "/", needed, top=True))


def _entries_argv(
    source: Path, dest: str, needed: tuple[str, ...], *, top: bool = False
) -> list[str]:
    argv: list[str] = []
    try:
        names = sorted(os.listdir(source))
    except OSError:
        return argv
    for name in names:
        if top and name in _MADE_BY_SANDBOX:
            continue
        path = source / name
        target = os.path.join(dest, name)
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), target]
        elif path.is_dir() and any(n.startswith(target + "/") for n in needed):
            argv += ["--dir", target, *_entries_argv(path, target, needed)]
        elif path.is_dir() and _is_empty(path):
            # An empty folder (/mnt, /srv, /boot) is made, not bound: a mount fewer per start.
            argv += ["--dir", target]
        elif path.is_dir() or path.is_file():
            argv += ["--ro-bind", str(path), target]
    return argv


def _is_empty(path: Path) -> bool:
    try:
        with os.scandir(path) as listing:
            return next(listing, None) is None
    except OSError:
        return False


_BIND_OPTIONS = {"--bind": 2, "--ro-bind": 2, "--dev-bind": 2, "--bind-try": 2, "--ro-bind-try": 2}


def bind_destinations(argv: list[str]) -> list[str]:
    """Where the binds of a bwrap option list go."""
    found = []
    for index, part in enumerate(argv):
        if part in _BIND_OPTIONS and index + 2 < len(argv):
            found.append(argv[index + 2])
    return found


def _lookup(table: Path, key: str, column: int) -> int | None:
    """``key`` as a number, or the number in ``column`` of its line in a passwd-style file."""
    if key.isdigit():
        return int(key)
    try:
        lines = table.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split(":")
        if len(fields) > column and fields[0] == key and fields[column].isdigit():
            return int(fields[column])
    return None


def _primary_gid(passwd: Path, uid: int) -> int | None:
    try:
        lines = passwd.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split(":")
        if len(fields) > 3 and fields[2] == str(uid) and fields[3].isdigit():
            return int(fields[3])
    return None
