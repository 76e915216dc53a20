"""Bytecode for a grading copy's own modules, compiled once per content and checked by hash.

Python trusts ordinary bytecode whose header names the source's size and modified second, so
bytecode kept from an earlier version of a file would run in place of a file rewritten with the
same size in the same second (seed 000 forbids that). Every test command therefore starts with no
``__pycache__`` in the copy, and without more each run compiles every module of the copy again
(tens of milliseconds per run for a small project, seconds for a large one).

:func:`fresh_bytecode` clears the copy's bytecode and then writes, right before the command,
bytecode that the interpreter checks against the source's hash when it imports the module (PEP
552 "checked" pycs): a file that differs in any byte from what was compiled is compiled again,
whatever its time and size. The bytecode is compiled from the file's content alone by the same
interpreter binary, in a helper process outside the sandbox that reads the sources as data and
runs none of them, and it is remembered by content for the rest of this process: the four runs
of a mined candidate, or the trials of one task, compile each version of a file once.

Only programs that lie outside the copy are ever started (a version manager's shim is one: it
picks the interpreter as it would for any folder, since the helper runs in ``/`` with an empty
environment). Whatever goes wrong here (no helper, a file that does not compile, a link where a
folder belongs) only means that the interpreter compiles that module itself, as it did before.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import select
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

MAX_SOURCE = 1 << 20
"""Larger files are left to the interpreter."""
MAX_FILES = 5000
"""Files placed per command at most: past that, walking and writing costs more than it saves."""
CACHE_BUDGET = 128 << 20
"""Bytes of bytecode remembered per process; past it the memory starts again empty."""
HELPER_TIMEOUT = 10.0
"""Seconds one file may take to compile before the helper is given up for this process."""
COMPILE_SECONDS = 2.0
"""Compiling for one command stops after this long (a large project's first run); the files
left are compiled by the interpreter, and by the helper for a later command."""
_NOT_COMPILED = frozenset({"site-packages", "dist-packages", "node_modules", ".tox", ".nox"})
_PYTEST_REWRITTEN = re.compile(r"(^test_.*|.*_test|^conftest)\.py$")
"""Modules that pytest compiles itself (it rewrites their asserts): bytecode of ours is unused."""
_PLAIN_WORD = re.compile(r"^[\w./+-]+$")

# The helper: a line with the interpreter's cache tag, then for each request (a line with the
# source's length, then the source) a line with the bytecode's length and the bytecode (0: none).
# Flags 3 = hash-based and checked (PEP 552).
_HELPER = r"""
import importlib.util, marshal, sys
read, out = sys.stdin.buffer, sys.stdout.buffer
out.write(("%s\n" % sys.implementation.cache_tag).encode())
out.flush()
while True:
    line = read.readline()
    if not line:
        break
    source = read.read(int(line))
    try:
        code = compile(source, "<source>", "exec", dont_inherit=True)
        pyc = importlib.util.MAGIC_NUMBER + (3).to_bytes(4, "little")
        pyc += importlib.util.source_hash(source) + marshal.dumps(code)
    except BaseException:
        pyc = b""
    out.write(b"%d\n" % len(pyc) + pyc)
    out.flush()
"""


@dataclass(frozen=True)
class Placed:
    files: int
    """Modules that got bytecode."""
    compiled: int
    """Of those, compiled for this command (the others were remembered)."""


def fresh_bytecode(
    root: Path,
    interpreters: Sequence[str],
    *,
    path: str,
    pytest: bool = False,
    ours: Sequence[Path] = (),
) -> Placed:
    """Remove every ``__pycache__`` under ``root``, then give its modules checked bytecode for
    each interpreter in ``interpreters`` (words as a command names them, found on ``path`` or
    relative to ``root``); with ``pytest``, not the modules pytest rewrites itself. ``ours``:
    modules of harnessdrive outside ``root`` (the launcher's) that get bytecode too."""
    compilers = [c for c in (_compiler_for(w, root, path) for w in interpreters) if c is not None]
    sources = [(str(module.parent), module.name) for module in ours]
    for folder, names in _walk(root):
        _clear_cache_folder(folder)
        for name in names:
            if len(sources) < MAX_FILES and not (pytest and _PYTEST_REWRITTEN.match(name)):
                sources.append((folder, name))
    placed = compiled = 0
    for compiler in dict.fromkeys(compilers):
        done, new = compiler.place(sources)
        placed, compiled = placed + done, compiled + new
    return Placed(placed, compiled)


def _walk(root: Path) -> Iterator[tuple[str, list[str]]]:
    """Each real folder under ``root`` but ``.git`` (links are never followed), with the ``.py``
    files to compile: none in installed packages and tool folders, whose bytecode is cleared all
    the same (a run imports few of their many modules)."""
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", "__pycache__")]
        if _NOT_COMPILED.intersection(Path(folder).relative_to(root).parts):
            yield folder, []
        else:
            yield folder, [n for n in filenames if n.endswith(".py")]


def _clear_cache_folder(folder: str) -> None:
    cache = os.path.join(folder, "__pycache__")
    try:
        info = os.lstat(cache)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(cache, ignore_errors=True)
    else:  # a link or a file: removed, never followed
        with contextlib.suppress(OSError):
            os.unlink(cache)


class _Compiler:
    """One helper process of one interpreter binary; safe to share between threads."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._tag: str | None = None
        self._broken = False
        self._pid = os.getpid()

    def place(self, sources: Sequence[tuple[str, str]]) -> tuple[int, int]:
        placed = compiled = 0
        deadline = time.monotonic() + COMPILE_SECONDS
        for folder, name in sources:
            data = _read(os.path.join(folder, name))
            if data is None:
                continue
            key = (self.binary, hashlib.sha256(data).digest())
            pyc = _CACHE.get(key)
            if pyc is None and key not in _CACHE and time.monotonic() < deadline:
                pyc = self._compile(data)
                if pyc is None and self._broken:
                    return placed, compiled
                _remember(key, pyc)
                compiled += pyc is not None
            if pyc is not None and self._tag and _write(folder, name, self._tag, pyc):
                placed += 1
        return placed, compiled

    def _compile(self, source: bytes) -> bytes | None:
        with self._lock:
            if self._broken:
                return None
            try:
                process = self._started()
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write(b"%d\n" % len(source) + source)
                process.stdin.flush()
                size = int(_line(process.stdout, HELPER_TIMEOUT))
                pyc = _exactly(process.stdout, size, HELPER_TIMEOUT)
            except (OSError, ValueError, TimeoutError):
                self._give_up()
                return None
            return pyc or None

    def _started(self) -> subprocess.Popen[bytes]:
        if self._pid != os.getpid():  # a forked worker: the parent's pipes are not ours
            self._process, self._pid = None, os.getpid()
        if self._process is None:
            self._process = subprocess.Popen(
                [self.binary, "-I", "-S", "-c", _HELPER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd="/",
                env={"LC_ALL": "C.UTF-8"},
            )
            assert self._process.stdout is not None
            tag = _line(self._process.stdout, HELPER_TIMEOUT).decode("ascii", "replace").strip()
            if not re.fullmatch(r"[\w.-]+", tag):
                raise ValueError("no cache tag")
            self._tag = tag
        return self._process

    def _give_up(self) -> None:
        self._broken = True
        if self._process is not None:
            self._process.kill()
            self._process.wait()


def _line(stream: IO[bytes], timeout: float) -> bytes:
    out = b""
    while not out.endswith(b"\n"):
        out += _exactly(stream, 1, timeout)
    return out


def _exactly(stream: IO[bytes], size: int, timeout: float) -> bytes:
    # Straight from the descriptor: the pipe's buffered reader would block past the timeout.
    fd = stream.fileno()
    chunks: list[bytes] = []
    left = size
    while left > 0:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            raise TimeoutError("the bytecode helper did not answer")
        chunk = os.read(fd, left)
        if not chunk:
            raise OSError("the bytecode helper ended")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(MAX_SOURCE + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def _write(folder: str, name: str, tag: str, pyc: bytes) -> bool:
    """``folder/__pycache__/<module>.<tag>.pyc``, through no link."""
    try:
        base = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir("__pycache__", dir_fd=base)
        cache = os.open("__pycache__", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=base)
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
            target = os.open(f"{name[:-3]}.{tag}.pyc", flags, 0o644, dir_fd=cache)
            with os.fdopen(target, "wb") as handle:
                handle.write(pyc)
        finally:
            os.close(cache)
        return True
    except OSError:
        return False
    finally:
        os.close(base)


def _compiler_for(word: str, root: Path, path: str) -> _Compiler | None:
    binary = _interpreter(word, root, path)
    if binary is None:
        return None
    with _COMPILERS_LOCK:
        compiler = _COMPILERS.get(binary)
        if compiler is None:
            compiler = _COMPILERS[binary] = _Compiler(binary)
    return compiler


def _interpreter(word: str, root: Path, path: str) -> str | None:
    """The program ``word`` names, when it is one that may be started outside the sandbox."""
    if not _PLAIN_WORD.match(word):
        return None  # a variable or a quoted word: what it names is only known inside
    found = os.path.join(root, word) if "/" in word else shutil.which(word, path=path)
    if found is None:
        return None
    real = os.path.realpath(found)
    inside = os.path.realpath(root)
    if real == inside or real.startswith(inside.rstrip(os.sep) + os.sep):
        return None  # a program of the copy never runs outside the sandbox
    return real if os.path.isfile(real) and os.access(real, os.X_OK) else None


def _remember(key: tuple[str, bytes], pyc: bytes | None) -> None:
    global _CACHED_BYTES
    with _COMPILERS_LOCK:
        size = len(pyc or b"")
        if _CACHED_BYTES + size > CACHE_BUDGET:
            _CACHE.clear()
            _CACHED_BYTES = 0
        _CACHE[key] = pyc
        _CACHED_BYTES += size


_COMPILERS: dict[str, _Compiler] = {}
_COMPILERS_LOCK = threading.Lock()
_CACHE: dict[tuple[str, bytes], bytes | None] = {}
_CACHED_BYTES = 0
