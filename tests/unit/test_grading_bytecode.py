"""No test run reads bytecode compiled from an earlier version of a file in the copy (seed 000).

Python trusts a ``.pyc`` whose header names the source's size and modified second. A file
rewritten with the same size within the same second therefore runs as its old version if the
old bytecode is still there. The probe below makes any bytecode left over look exactly like
that (it rewrites the header to the current file's size and second) and then imports the file:
it prints the old value if anything stale survived, the new one otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.cli.variants import resolve_variants
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import TaskFiles, write_suite
from tests.sandboxes import require_bwrap

PROBE = """\
import importlib.util
import sys
from pathlib import Path

source, wanted = Path(sys.argv[1]), sys.argv[2]
cached = Path(importlib.util.cache_from_source(str(source)))
if cached.is_file():
    info = source.stat()
    data = bytearray(cached.read_bytes())
    data[8:12] = (int(info.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
    data[12:16] = (info.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    cached.write_bytes(bytes(data))
sys.path.insert(0, str(source.parent))
module = __import__(source.stem)
print("imported", module.VALUE)
sys.exit(0 if module.VALUE == wanted else 1)
"""


def run_trials(tmp_path: Path, task: TaskFiles, sandbox: str, commands: list[str]) -> list[dict]:
    if sandbox == "bwrap":
        require_bwrap()
    suite = load_suite(write_suite(tmp_path / "suite", [task]))
    variants = resolve_variants(suite, [], commands=commands)
    results = tmp_path / "results"
    execute(make_plan(suite, variants, 1), RunOptions(results=results, sandbox=sandbox))  # type: ignore[arg-type]
    found = [json.loads(p.read_text()) for p in results.glob("trials/**/result.json")]
    assert len(found) == len(commands)
    return found


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_hidden_file_replacing_a_visible_one_runs_as_its_new_version(
    tmp_path: Path, sandbox: str
) -> None:
    # Same size, and (through the probe) the same second: the visible run's bytecode of
    # tests/value.py would pass for the hidden version, which is bound read-only under bwrap.
    task = TaskFiles(
        "swap",
        files={"probe.py": PROBE, "tests/value.py": 'VALUE = "visible"\n'},
        hidden={"tests/value.py": 'VALUE = "hidden!"\n'},
        visible_command="{python} probe.py tests/value.py visible",
        command="{python} probe.py tests/value.py 'hidden!'",
    )
    (result,) = run_trials(tmp_path, task, sandbox, ["idle=true"])
    grading = result["rounds"][-1]["grading"]
    assert grading["visible"]["exit_code"] == 0  # the visible run compiled the old version
    assert grading["hidden"]["exit_code"] == 0, grading
    assert result["outcome"] == "pass"


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_each_trial_runs_its_own_version_of_a_file_compiled_by_setup(
    tmp_path: Path, sandbox: str
) -> None:
    # Setup compiles the base version in the copy; each agent rewrites it with the same size.
    task = TaskFiles(
        "rewrite",
        files={"probe.py": PROBE, "mod.py": 'VALUE = "base!"\n', "want.txt": "base!"},
        setup=["{python} -m compileall -q mod.py"],
        command='{python} probe.py mod.py "$(cat want.txt)"',
    )
    agents = [
        f"{name}=printf 'VALUE = \"{name}!!\"\\n' > mod.py && printf '{name}!!' > want.txt"
        for name in ("one", "two")
    ]
    for result in run_trials(tmp_path, task, sandbox, agents):
        assert result["outcome"] == "pass", result["rounds"][-1]["grading"]
