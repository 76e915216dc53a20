"""The demo's differential task rewritten with every command form: the oracle, the generator
and the candidate as commands, and the oracle served by a server of the task's own."""

from __future__ import annotations

import shutil
from pathlib import Path

from harnessdrive.demo import DEMO_SUITE

TASK = DEMO_SUITE / "tasks" / "skiplist"
FIXTURES = Path(__file__).parent / "fixtures" / "differential"
ORACLE_TABLE = """[grade.oracle]
command = ["python3", "-I", "-S", "oracle/oracle_cli.py", "{case}"]
switches = { comments = "--no-comments", braces = "--no-braces", nocase = "NOCASE_OFF=1" }
server = ["python3", "-I", "-S", "oracle/serve.py", "{port}"]
"""


def command_task(folder: Path, *, candidate_command: bool = True) -> Path:
    """A copy of the skiplist task at ``folder`` whose [grade] uses commands throughout (the
    candidate as ``module:function`` still, unless ``candidate_command``)."""
    shutil.copytree(TASK, folder)
    for name in ("oracle_cli.py", "generate_cli.py", "serve.py"):
        shutil.copy(FIXTURES / name, folder / "oracle" / name)
    shutil.copy(FIXTURES / "candidate_cli.py", folder / "repo" / "skiplist_cli.py")
    toml = folder / "task.toml"
    text = toml.read_text()
    if candidate_command:
        text = text.replace(
            'candidate = "skiplist.rules:skipped"',
            'candidate_command = "python skiplist_cli.py"',
        )
    text = text.replace(
        '[grade.oracle]\nfunction = "oracle/skiplist_oracle.py:answer"\n', ORACLE_TABLE
    )
    text = text.replace(
        'function = "oracle/generate.py:make_case"',
        'command = "python3 -I -S oracle/generate_cli.py {index} {seed} {profile}"',
    )
    assert "oracle_cli" in text and "generate_cli" in text
    toml.write_text(text)
    return folder
