"""The grading copy's modules get bytecode that Python checks against each file's hash."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.grading.bytecode import fresh_bytecode
from harnessdrive.grading.runners import LAUNCHER_MODULE, install_launcher
from harnessdrive.testing.suites import TaskFiles
from tests.unit.test_grading_bytecode import run_trials

TAG = sys.implementation.cache_tag
PATH = os.path.dirname(sys.executable) + os.pathsep + os.defpath


def project(root: Path, files: dict[str, str]) -> Path:
    """Files whose content no other test has: bytecode is remembered by content per process."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text if name.endswith("python") else f"{text}# {root.parent}\n")
    return root


def imported_value(root: Path, module: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}; print({module}.VALUE)"],
        cwd=root,
        env={"PATH": PATH},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_each_module_gets_bytecode_checked_against_its_source_hash(tmp_path: Path) -> None:
    root = project(tmp_path / "copy", {"pkg/__init__.py": "", "pkg/mod.py": "VALUE = 'one'\n"})
    placed = fresh_bytecode(root, [sys.executable], path=PATH)
    assert (placed.files, placed.compiled) == (2, 2)
    pyc = (root / "pkg" / "__pycache__" / f"mod.{TAG}.pyc").read_bytes()
    assert pyc[:4] == importlib.util.MAGIC_NUMBER
    assert int.from_bytes(pyc[4:8], "little") == 3  # hash-based, checked on import
    assert pyc[8:16] == importlib.util.source_hash((root / "pkg" / "mod.py").read_bytes())
    assert imported_value(root, "pkg.mod") == "one"


def test_a_file_rewritten_with_the_same_size_and_time_runs_as_its_new_version(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "copy", {"mod.py": "VALUE = 'old'\n"})
    before = (root / "mod.py").stat()
    fresh_bytecode(root, [sys.executable], path=PATH)
    (root / "mod.py").write_text((root / "mod.py").read_text().replace("old", "new"))
    os.utime(root / "mod.py", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (root / "mod.py").stat().st_size == before.st_size
    assert imported_value(root, "mod") == "new"


def test_bytecode_is_compiled_once_per_content(tmp_path: Path) -> None:
    files = {"a.py": "VALUE = 'a1'\n", "b.py": "VALUE = 'b'\n"}
    first, second = project(tmp_path / "one", files), project(tmp_path / "two", files)
    assert fresh_bytecode(first, [sys.executable], path=PATH).compiled == 2
    again = fresh_bytecode(second, [sys.executable], path=PATH)
    assert (again.files, again.compiled) == (2, 0)
    (second / "a.py").write_text(f"VALUE = 'a2'  # {tmp_path}\n")
    changed = fresh_bytecode(second, [sys.executable], path=PATH)
    assert (changed.files, changed.compiled) == (2, 1)
    assert imported_value(second, "a") == "a2"


def test_old_bytecode_in_the_copy_is_removed_first(tmp_path: Path) -> None:
    root = project(tmp_path / "copy", {"mod.py": "VALUE = 'x'\n"})
    stale = root / "__pycache__" / "gone.cpython-39.pyc"
    stale.parent.mkdir()
    stale.write_bytes(b"planted")
    fresh_bytecode(root, [], path=PATH)
    assert not (root / "__pycache__").exists()


def test_modules_pytest_rewrites_get_none_under_pytest(tmp_path: Path) -> None:
    files = {"conftest.py": "", "tests/test_x.py": "", "tests/x_test.py": "", "lib.py": ""}
    root = project(tmp_path / "copy", files)
    assert fresh_bytecode(root, [sys.executable], path=PATH, pytest=True).files == 1
    assert sorted(p.name for p in root.rglob("*.pyc")) == [f"lib.{TAG}.pyc"]
    assert fresh_bytecode(root, [sys.executable], path=PATH).files == 4


def test_installed_packages_in_the_copy_are_cleared_but_not_compiled(tmp_path: Path) -> None:
    site = ".venv/lib/python3/site-packages"
    root = project(tmp_path / "copy", {f"{site}/dep.py": "VALUE = 1\n", "mod.py": "VALUE = 2\n"})
    (root / site / "__pycache__").mkdir()
    (root / site / "__pycache__" / "dep.cpython-39.pyc").write_bytes(b"old")
    tool = root / "node_modules" / "gyp" / "__pycache__"
    tool.mkdir(parents=True)
    (tool / "gyp.cpython-39.pyc").write_bytes(b"old")
    assert fresh_bytecode(root, [sys.executable], path=PATH).files == 1
    assert not (root / site / "__pycache__").exists()
    assert not tool.exists()


def test_a_file_that_does_not_compile_is_left_to_the_interpreter(tmp_path: Path) -> None:
    root = project(tmp_path / "copy", {"bad.py": "def (:\n", "good.py": "VALUE = 1\n"})
    assert fresh_bytecode(root, [sys.executable], path=PATH).files == 1
    assert [p.name for p in root.rglob("*.pyc")] == [f"good.{TAG}.pyc"]


def test_a_link_where_the_cache_folder_belongs_is_removed_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = project(tmp_path / "copy", {"pkg/mod.py": "VALUE = 'in'\n"})
    (root / "pkg" / "__pycache__").symlink_to(outside)
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (outside / "other.py").write_text("VALUE = 'out'\n")
    assert fresh_bytecode(root, [sys.executable], path=PATH).files == 1
    assert list(outside.iterdir()) == [outside / "other.py"]
    assert not (root / "pkg" / "__pycache__").is_symlink()
    assert (root / "pkg" / "__pycache__" / f"mod.{TAG}.pyc").is_file()


def test_no_program_of_the_copy_is_ever_started(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    script = f'#!/bin/sh\ntouch {marker}\nexec {sys.executable} "$@"\n'
    root = project(tmp_path / "copy", {"mod.py": "VALUE = 1\n", ".venv/bin/python": script})
    (root / ".venv" / "bin" / "python").chmod(0o755)
    (root / "bin").mkdir()
    (root / "bin" / "python").symlink_to(root / ".venv" / "bin" / "python")
    (root / "bin" / "python3").symlink_to(sys.executable)  # a link of the copy to a real one
    inside = [".venv/bin/python", "bin/python", str(root / ".venv/bin/python"), "$PY", "py thon"]
    assert fresh_bytecode(root, inside, path=str(root / "bin")).files == 0
    assert fresh_bytecode(root, ["python"], path=str(root / "bin")).files == 0
    assert not marker.exists()
    # The link's target lies outside the copy: that program may run.
    assert fresh_bytecode(root, ["bin/python3"], path=os.defpath).files == 1


def test_a_version_managers_shim_outside_the_copy_is_followed(tmp_path: Path) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (shims / "python").chmod(0o755)
    root = project(tmp_path / "copy", {"mod.py": "VALUE = 'shim'\n"})
    assert fresh_bytecode(root, ["python"], path=str(shims)).files == 1
    assert (root / "__pycache__" / f"mod.{TAG}.pyc").is_file()


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_graded_run_imports_the_copys_modules_from_checked_bytecode(
    tmp_path: Path, sandbox: str
) -> None:
    test = (
        "import unittest\nimport mod\n\n\nclass T(unittest.TestCase):\n"
        "    def test_checked(self):\n"
        "        with open(mod.__cached__, 'rb') as handle:\n"
        "            flags = int.from_bytes(handle.read(8)[4:], 'little')\n"
        "        self.assertEqual((mod.VALUE, flags), (2, 3))\n"
    )
    task = TaskFiles(
        "checked",
        files={"mod.py": "VALUE = 1\n", "tests/__init__.py": ""},
        hidden={"tests/test_checked.py": test},
        command="{python} -m unittest discover -s tests -t .",
    )
    (result,) = run_trials(tmp_path, task, sandbox, ["fix=printf 'VALUE = 2\\n' > mod.py"])
    hidden = result["rounds"][-1]["grading"]["hidden"]
    assert result["outcome"] == "pass", json.dumps(hidden)


def test_the_launcher_module_gets_bytecode_that_its_script_imports(tmp_path: Path) -> None:
    # A script is compiled on every start; the launcher's code is a module beside a short
    # script, and its bytecode (placed with the copy's) is what the interpreter loads.
    root = project(tmp_path / "copy", {"mod.py": "VALUE = 'x'\n"})
    script = install_launcher(tmp_path / "runner")
    module = script.with_name(LAUNCHER_MODULE)
    fresh_bytecode(root, [sys.executable], path=PATH, ours=(module,))
    pyc = module.parent / "__pycache__" / f"{module.stem}.{TAG}.pyc"
    assert int.from_bytes(pyc.read_bytes()[4:8], "little") == 3
    done = subprocess.run(
        [sys.executable, "-v", "-s", str(script), "no-such-mode"],
        cwd=root,
        env={"PATH": PATH},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "hdrun: unknown mode no-such-mode" in done.stderr
    assert f"matches {module}" in done.stderr  # -v: the module came from its bytecode
