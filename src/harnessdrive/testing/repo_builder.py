"""Build git histories for tests: fast, deterministic, and with git's awkward cases on hand.

Every commit goes through one long-lived ``git fast-import`` process, so a history of thousands
of commits takes seconds, and fixed authors and dates make the shas the same on every run::

    repo = RepoBuilder(tmp_path / "repo")
    first = repo.commit("Add ops", files={"src/ops.py": "...", "tests/test_ops.py": "..."})
    fix = repo.commit("Fix sub\\n\\nIt added.", files={"src/ops.py": "..."}, delete=["old.py"])
    scan_history(repo.path, since="2000-01-01")

Reading :attr:`RepoBuilder.path`, using the builder as a path (``os.fspath``), or calling
:meth:`sync` makes everything committed so far visible to other git processes.

File values are ``str`` (UTF-8 text), ``bytes`` (any content, binary included),
:class:`Executable`, :class:`Symlink` or :class:`Gitlink` (a submodule pointer). Paths may be
``bytes`` for names that are not UTF-8.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

DEFAULT_AUTHOR = ("Dev", "dev@example.com")
DEFAULT_START = datetime(2024, 1, 1, tzinfo=UTC)
DEFAULT_STEP = timedelta(hours=1)
LFS_ATTRIBUTES = "*.bin filter=lfs diff=lfs merge=lfs -text\n"


@dataclass(frozen=True)
class Executable:
    """A file with the executable bit (mode 100755)."""

    content: str | bytes


@dataclass(frozen=True)
class Symlink:
    target: str | bytes


@dataclass(frozen=True)
class Gitlink:
    """A submodule pointer: a commit of another repository, recorded as mode 160000."""

    sha: str


FileValue = str | bytes | Executable | Symlink | Gitlink
Person = tuple[str, str]


def lfs_pointer(content: bytes) -> str:
    """The Git LFS pointer file that stands in for ``content`` in a repository."""
    oid = hashlib.sha256(content).hexdigest()
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {len(content)}\n"


def builder_env() -> dict[str, str]:
    """A git environment that no user or system config, hook template or GIT_* variable reaches."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    return env


def _git(cwd: Path, *args: str | bytes) -> bytes:
    result = subprocess.run(
        ["git", *args], cwd=cwd, env=builder_env(), capture_output=True, check=False
    )
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise RuntimeError(f"git {os.fsdecode(args[0])} failed: {message}")
    return result.stdout


def _quote(path: str | bytes) -> bytes:
    """A path in C-style quotes, which fast-import reads back byte for byte."""
    raw = path if isinstance(path, bytes) else os.fsencode(path)
    out = bytearray(b'"')
    for byte in raw:
        if byte in (0x22, 0x5C):
            out += b"\\" + bytes([byte])
        elif 0x20 <= byte < 0x7F:
            out.append(byte)
        else:
            out += b"\\%03o" % byte
    return bytes(out + b'"')


def _data(content: str | bytes) -> bytes:
    raw = content.encode() if isinstance(content, str) else content
    return b"data %d\n%s\n" % (len(raw), raw)


def _file_command(path: str | bytes, value: FileValue) -> bytes:
    quoted = _quote(path)
    if isinstance(value, Gitlink):
        return b"M 160000 %s %s\n" % (value.sha.encode("ascii"), quoted)
    if isinstance(value, Symlink):
        return b"M 120000 inline %s\n%s" % (quoted, _data(value.target))
    if isinstance(value, Executable):
        return b"M 100755 inline %s\n%s" % (quoted, _data(value.content))
    return b"M 100644 inline %s\n%s" % (quoted, _data(value))


def _close_process(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
        process.wait()


class RepoBuilder:
    """A git repository whose history is written commit by commit through ``git fast-import``."""

    def __init__(
        self,
        path: Path | str,
        *,
        branch: str = "main",
        start: datetime = DEFAULT_START,
        step: timedelta = DEFAULT_STEP,
        author: Person = DEFAULT_AUTHOR,
    ) -> None:
        self._path = Path(path)
        self._path.mkdir(parents=True, exist_ok=True)
        self.branch = branch
        self.author = author
        self._next_date = start
        self._step = step
        self._marks = 0
        self._dirty = False
        self._tips: dict[str, str] = {}
        # fast-import finds its own unsaved commits by mark only, not by sha.
        self._mark_of: dict[str, int] = {}
        if not (self._path / ".git").exists():
            _git(self._path, "init", "-q", "--template=", "-b", branch)
        else:
            found = _git(self._path, "for-each-ref", "--format=%(refname:short) %(objectname)")
            for line in found.decode().splitlines():
                name, sha = line.split()
                self._tips[name] = sha
        # Open for the builder's whole life; close() closes it.
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self._process = subprocess.Popen(
            ["git", "fast-import", "--quiet", "--done", "--force", "--date-format=raw"],
            cwd=self._path,
            env=builder_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._finalizer = weakref.finalize(self, _close_process, self._process)
        self._send(b"feature done\n")

    # --- writing history -------------------------------------------------------------------

    def commit(
        self,
        message: str | bytes,
        files: Mapping[str | bytes, FileValue] | None = None,
        delete: Iterable[str | bytes] = (),
        *,
        date: datetime | str | None = None,
        author: Person | None = None,
        committer: Person | None = None,
        branch: str | None = None,
        parents: list[str] | None = None,
        encoding: str | None = None,
    ) -> str:
        """Commit ``files`` (written) and ``delete`` (removed) on top of the branch; the sha.

        ``parents`` overrides the branch tip: ``[]`` makes a root commit, two or more a merge.
        ``encoding`` records a message encoding header (``ISO-8859-1``) for a bytes message.
        """
        branch = branch or self.branch
        if parents is None:
            parents = [self._tips[branch]] if branch in self._tips else []
        when = self._date(date)
        author = author or self.author
        committer = committer or author
        self._marks += 1
        stamp = f"{int(when.timestamp())} {when.strftime('%z')}"
        raw_message = message.encode() if isinstance(message, str) else message
        if not raw_message.endswith(b"\n"):
            raw_message += b"\n"
        chunks = [
            b"reset refs/heads/%s\n" % branch.encode() if not parents else b"",
            b"commit refs/heads/%s\n" % branch.encode(),
            b"mark :%d\n" % self._marks,
            f"author {author[0]} <{author[1]}> {stamp}\n".encode(),
            f"committer {committer[0]} <{committer[1]}> {stamp}\n".encode(),
            f"encoding {encoding}\n".encode() if encoding else b"",
            _data(raw_message),
        ]
        if parents:
            chunks.append(b"from %s\n" % self._ref(parents[0]))
            chunks += [b"merge %s\n" % self._ref(p) for p in parents[1:]]
        chunks += [b"D %s\n" % _quote(path) for path in delete]
        chunks += [_file_command(path, value) for path, value in (files or {}).items()]
        chunks.append(b"\nget-mark :%d\n" % self._marks)
        self._send(b"".join(chunks))
        sha = self._read_line().decode("ascii")
        self._mark_of[sha] = self._marks
        self._tips[branch] = sha
        self._dirty = True
        return sha

    def merge(
        self,
        *others: str,
        message: str = "Merge",
        files: Mapping[str | bytes, FileValue] | None = None,
        branch: str | None = None,
        date: datetime | str | None = None,
    ) -> str:
        """A merge commit of the branch tip and ``others`` (shas), keeping the tip's tree."""
        branch = branch or self.branch
        return self.commit(
            message, files, branch=branch, parents=[self._tips[branch], *others], date=date
        )

    def create_branch(self, name: str, at: str | None = None) -> None:
        """A new branch at ``at`` (default: the current branch's tip); commits name it."""
        at = at or self._tips[self.branch]
        self._send(b"reset refs/heads/%s\nfrom %s\n\n" % (name.encode(), self._ref(at)))
        self._tips[name] = at
        self._dirty = True

    def tip(self, branch: str | None = None) -> str:
        return self._tips[branch or self.branch]

    # --- making it visible -----------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The repository folder, with every commit so far visible to other git processes."""
        self.sync()
        return self._path

    def __fspath__(self) -> str:
        """So a builder can stand wherever a path is expected (synced, like ``path``)."""
        return str(self.path)

    def sync(self) -> None:
        """Write the pack and refs so far to disk (fast-import's checkpoint)."""
        if not self._dirty:
            return
        self._marks += 1
        token = b"synced-%d" % self._marks
        self._send(b"checkpoint\nprogress %s\n\n" % token)
        while self._read_line() != b"progress " + token:
            pass
        self._dirty = False

    def close(self) -> None:
        """Finish writing; the builder cannot commit afterwards."""
        if self._process.poll() is None:
            self._send(b"done\n")
            assert self._process.stdin is not None
            self._process.stdin.close()
            if self._process.wait() != 0:
                raise RuntimeError(f"git fast-import failed: {self._errors()}")
        self._finalizer.detach()
        self._stderr.close()
        self._dirty = False

    def __enter__(self) -> RepoBuilder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def checkout(self) -> Path:
        """Write the branch's files into the working folder (fast-import only writes history)."""
        path = self.path
        _git(path, "reset", "-q", "--hard")
        return path

    def git(self, *args: str | bytes) -> str:
        """Run git in the repository (after a sync) and return its output."""
        return _git(self.path, *args).decode("utf-8", "replace")

    # --- clones with special shapes --------------------------------------------------------

    def shallow_clone(self, dest: Path | str, depth: int) -> Path:
        """A clone holding only the newest ``depth`` commits of the branch."""
        dest = Path(dest)
        _git(self.path, "clone", "-q", "--no-local", f"--depth={depth}", str(self._path), str(dest))
        return dest

    def partial_clone(self, dest: Path | str, filter_spec: str = "blob:none") -> Path:
        """A real partial clone (``git clone --filter``): old file contents stay in this repo."""
        dest = Path(dest)
        _git(self.path, "config", "uploadpack.allowFilter", "true")
        _git(
            self._path, "clone", "-q", "--no-local", f"--filter={filter_spec}",
            str(self._path), str(dest),
        )  # fmt: skip
        return dest

    def mark_partial_clone(self, remote: str = "origin") -> None:
        """Set the config a partial clone has, without cloning."""
        _git(self.path, "config", f"remote.{remote}.promisor", "true")
        _git(self._path, "config", f"remote.{remote}.partialclonefilter", "blob:none")

    # --- internals -------------------------------------------------------------------------

    def _ref(self, sha: str) -> bytes:
        mark = self._mark_of.get(sha)
        return b":%d" % mark if mark else sha.encode("ascii")

    def _date(self, date: datetime | str | None) -> datetime:
        if date is None:
            when = self._next_date
            self._next_date += self._step
            return when
        when = datetime.fromisoformat(date) if isinstance(date, str) else date
        return when if when.tzinfo else when.replace(tzinfo=UTC)

    def _send(self, data: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        if stdin.closed:
            raise RuntimeError("this RepoBuilder is closed")
        try:
            stdin.write(data)
            stdin.flush()
        except BrokenPipeError:
            raise RuntimeError(f"git fast-import stopped: {self._errors()}") from None

    def _read_line(self) -> bytes:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            self._process.wait()
            raise RuntimeError(f"git fast-import stopped: {self._errors()}")
        return line.rstrip(b"\n")

    def _errors(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace").strip() or "no message"
