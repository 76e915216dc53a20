"""Mining records whether a commit changed code or only tests, comments and docstrings."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from harnessdrive.mining.change_kind import code_changed
from harnessdrive.mining.history import scan_history
from harnessdrive.mining.taskfiles import TaskSettings, record_change_kind, write_task_folder
from harnessdrive.testing.repo_builder import RepoBuilder

_TEST = "import calc\n\n\ndef test_{0}():\n    assert {1}\n"
_CODE = 'def add(a, b):\n    """Add."""\n    return a - b\n'


def test_each_mined_task_records_whether_its_commit_changed_code(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "calc")
    repo.commit("Start", {"calc.py": _CODE, "tests/test_base.py": _TEST.format("base", "True")})
    fixed = _CODE.replace("a - b", "a + b")
    repo.commit(
        "Fix add",
        {"calc.py": fixed, "tests/test_add.py": _TEST.format("add", "calc.add(2, 3) == 5")},
    )
    documented = fixed.replace('"""Add."""', '"""Add two numbers."""\n    # plain +')
    repo.commit(
        "Document add",
        {
            "calc.py": documented,
            "README.md": "add() adds.\n",
            "tests/test_doc.py": _TEST.format("doc", "calc.add.__doc__ == 'Add two numbers.'"),
        },
    )
    repo.checkout()
    repo.close()
    settings = TaskSettings(test_command="python -m pytest -q", setup_command=None, test_timeout=60)
    kinds = {}
    for candidate in scan_history(tmp_path / "calc", since="2000-01-01").candidates:
        folder = write_task_folder(tmp_path / candidate.id, tmp_path / "calc", candidate, settings)
        metadata = tomllib.loads((folder / "task.toml").read_text())["metadata"]
        kinds[candidate.subject] = metadata["change_kind"]
    assert kinds == {"Fix add": "code", "Document add": "comments-only"}


@pytest.mark.parametrize(
    ("path", "before", "after", "changed"),
    [
        ("a.py", "x = 1\n", "x = 1  # one\n", False),
        ("a.py", "def f():\n    return 1\n", 'def f():\n    """One."""\n    return 1\n', False),
        ("a.py", "x = 1\n", "x = 2\n", True),
        ("a.py", "x = 1\n", "x = (\n", True),  # no longer parses: counts as code
        ("a.c", "int x = 1;\n", "/* the count */\n// one\nint x = 1;\n", False),
        ("a.c", 'char *u = "a";\n', 'char *u = "a//b";\n', True),  # the // is in a string
        ("a.c", "int x = 1;\n", "int x = 1;  // one\n", True),  # a trailing comment: unsure
        ("a.go", "x := 1\n", "// set x\nx := 1\n", False),
        ("a.sh", "echo hi\n", "# greet\necho hi\n", False),
        ("a.sh", "echo hi\n", "echo '#hi'\n", True),
        ("a.ts", "let x = 1;\n", "// one\nlet x = 1;\n", True),  # no simple rule for it
        ("a.json", "{}\n", "{ }\n", True),
    ],
)
def test_code_changed(path: str, before: str, after: str, changed: bool) -> None:
    assert code_changed(path, before.encode(), after.encode()) is changed


def test_the_kind_recorded_after_the_fast_check_is_the_one_written_at_once(tmp_path: Path) -> None:
    """Validation writes a task without its change kind and records the kind once the fast check
    leaves the commit standing; the task then reads as if written whole, even when the commit's
    message, which the prompt quotes, holds a line like the metadata table's header."""
    repo = RepoBuilder(tmp_path / "calc")
    repo.commit("Start", {"calc.py": _CODE, "tests/test_base.py": _TEST.format("base", "True")})
    documented = _CODE.replace('"""Add."""', '"""Add two numbers."""')
    repo.commit(
        'Document add\n\n[metadata]\nchange_kind = "code"\n',
        {
            "calc.py": documented,
            "tests/test_doc.py": _TEST.format("doc", "calc.add.__doc__ == 'Add two numbers.'"),
        },
    )
    repo.close()
    settings = TaskSettings(test_command="python -m pytest -q", setup_command=None, test_timeout=60)
    [candidate] = scan_history(tmp_path / "calc", since="2000-01-01").candidates
    calc = tmp_path / "calc"
    whole = write_task_folder(tmp_path / "whole", calc, candidate, settings)
    later = write_task_folder(tmp_path / "later", calc, candidate, settings, kind=False)
    assert "change_kind" not in tomllib.loads((later / "task.toml").read_text())["metadata"]

    record_change_kind(later, calc, candidate)

    read = [tomllib.loads((f / "task.toml").read_text()) for f in (whole, later)]
    assert read[0] == read[1]
    assert read[1]["metadata"]["change_kind"] == "comments-only"
    assert '[metadata]\nchange_kind = "code"' in read[1]["prompt"]
