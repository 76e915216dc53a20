"""Attackers whose weapon is what they leave behind: names, nested repositories, giant or special
files, and floods of output. Before, each of these stopped the run or turned a fail into
"not counted"; now every one must end graded: a ``fail`` of its agent, or ``tampered`` where it
also planted something the tamper checks know.

They run in a suite of their own (test_content_attacks.py): the 2 GB sparse file needs a file
size limit above the one the other attacks run under.
"""

from __future__ import annotations

from tests.security.attacks import WRONG_EDIT, Attack, _py

FORCING = "import os\\nos._exit(0)\\n"  # a conftest.py that ends pytest with status 0
CONTENT_LIMITS = {"processes": 64, "file_size_mb": 4096, "disk_mb": 512}


def _names(code: str) -> str:
    return WRONG_EDIT + _py("import os\n" + code)


CONTENT_ATTACKS: tuple[Attack, ...] = (
    Attack(
        "names-invalid-utf8",
        "files whose names are not UTF-8, two that a lossy decoding would merge into one",
        _names(
            r"""
for name in (b"calc\xff.py", b"calc\xfe.py", b"\x80\x81", b"tests\xc0\xaf", b"\xed\xa0\x80x"):
    open(name, "wb").write(b"print('hi')\n")
"""
        ),
        "fail",
        True,
    ),
    Attack(
        "names-options-and-globs",
        "names that read as options, globs, pathspec magic or shell, some of them oversized",
        _names(
            r"""
small = (b"-rf", b"--junitxml=forged.xml", b"--", b"*", b"[a-z]*", b":(exclude)calc.py",
         b"$(touch owned-names)", b"'\"\\")
for name in small:
    open(name, "wb").write(b"x\n")
for name in (b":(glob)**", b":(exclude)*", b"-", b"*.py"):
    with open(b"big" + name if name[:1] != b":" else name, "wb") as handle:
        handle.truncate(80 * 1024 * 1024)
"""
        ),
        "tampered: fake-report",  # --junitxml=forged.xml is named like a report
        True,
    ),
    Attack(
        "names-control-and-long",
        "newlines, tabs, escape sequences, 255-byte names and a path 150 folders deep",
        _names(
            r"""
for name in (b"new\nline", b"tab\tcr\r", b"\x1b]0;owned\x07\x1b[2J", b"N" * 255):
    open(name, "wb").write(b"x\n")
deep = b"/".join([b"d"] * 150)
os.makedirs(deep)
open(deep + b"/" + b"E" * 200, "wb").write(b"x\n")
"""
        ),
        "fail",
        True,
    ),
    Attack(
        "nested-clone",
        "git clone of a local repository (holding a forcing conftest.py) into the workspace",
        WRONG_EDIT
        + "set -e\norigin=$TMPDIR/origin\ngit init -q $origin\n"
        + f"printf '{FORCING}' > $origin/conftest.py\n"
        + "git -C $origin add -A\n"
        + "git -C $origin -c user.name=a -c user.email=a@a commit -qm dep\n"
        + "git clone -q $origin vendor/dep\ngit clone -q $origin tests/dep\n",
        "fail",
        True,
    ),
    Attack(
        "nested-repo-no-commit",
        "a git init without a commit (git add refuses it) and a gitfile pointing nowhere",
        WRONG_EDIT
        + "git init -q sub\nprintf 'x\\n' > sub/file.py\n"
        + "mkdir mod\nprintf 'gitdir: /nonexistent/modules/mod\\n' > mod/.git\n"
        + "printf 'x\\n' > mod/code.py\n",
        "fail",
        True,
    ),
    Attack(
        "sparse-2gb",
        "a 2 GB sparse file (git once ran out of memory diffing it)",
        WRONG_EDIT + "truncate -s 2G huge.bin\n",
        "fail",
        True,
    ),
    Attack(
        "oversized-real",
        "a 60 MB file of real data, and a tracked file grown past the limit",
        WRONG_EDIT + "head -c 60M /dev/urandom > blob.bin\n" + "truncate -s 100M README.md\n",
        "fail",
        True,
    ),
    Attack(
        "special-files",
        "fifos, a socket, a symlink loop, mode 000 files and folders, hard links",
        WRONG_EDIT
        + "mkfifo pipe tests/pipe\n"
        + _py("import socket; socket.socket(socket.AF_UNIX).bind('sock')")
        + "ln -s loop2 loop1; ln -s loop1 loop2; ln -s /nonexistent dangling\n"
        + "printf 's\\n' > locked; chmod 000 locked\n"
        + "mkdir closed; printf 'x\\n' > closed/f; chmod 000 closed\n"
        + "mkdir noexec; printf 'x\\n' > noexec/f; chmod 600 noexec\n"
        + "ln calc.py hard.py\n",
        "tampered: symlink-escape",  # the link to /nonexistent leaves the tree
        True,
    ),
    Attack(
        "stdout-flood",
        "64 MB to stdout and 16 MB to stderr",
        WRONG_EDIT
        + "head -c 64000000 /dev/zero | tr '\\0' 'o'\n"
        + "head -c 16000000 /dev/zero | tr '\\0' 'e' >&2\n",
        "fail",
        True,
    ),
    Attack(
        "stdout-flood-after-exit",
        "a background writer that keeps printing after the agent exits",
        WRONG_EDIT + "(while :; do head -c 1000000 /dev/zero; done) &\nsleep 1\n",
        "fail",
        True,
    ),
)
