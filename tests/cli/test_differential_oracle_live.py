"""A real CLI (Claude Code) in bubblewrap asks a differential task's own oracle server during its
run, through the loopback relay that carries its model endpoint; at grading the server is gone.

The scripted model has the CLI run the task's `tools/ask_oracle.py` on one case and then bake
the server's address into the starter, so the graded candidate calls exactly the address the
agent could reach. The server logs every case it answers: it answered the agent's one, and
none of the graded candidate's.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from harnessdrive.demo.scripted import scripted_prices
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import load_suite
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.model_server import ModelServer, Script, Shell, Turn
from tests.cli.conftest import cli_binary, endpoint_for
from tests.differential_tasks import command_task
from tests.sandboxes import require_bwrap

pytestmark = pytest.mark.cli

MODEL = "claude-sonnet-4-5"
CASE = {"patterns": ["*.{LOG,md}"], "files": ["a.log", "b.md", "c.py"]}
ASK = (
    f"printf '%s' '{json.dumps(CASE)}' > \"$TMPDIR/case.json\" && "
    'python3 tools/ask_oracle.py "$TMPDIR/case.json" > skiplist/asked.json && '
    "printf '%s' \"$HARNESSDRIVE_ORACLE_URL\" > skiplist/url.txt && "
    'sed -i "s#http://127.0.0.1:9#$HARNESSDRIVE_ORACLE_URL#" skiplist/rules.py'
)
SCRIPT = Script(
    turns=(
        Turn(text="Asking the reference.", actions=(Shell(command=ASK),)),
        Turn(text="Done."),
    )
)


def test_claude_asks_the_tasks_oracle_server_and_grading_cannot(tmp_path: Path) -> None:
    require_bwrap()
    suite = tmp_path / "suite"
    (suite / "tasks").mkdir(parents=True)
    (suite / "suite.toml").write_text('name = "oracle-live"\ntasks = ["tasks/*"]\n')
    task = command_task(suite / "tasks" / "skiplist", candidate_command=False)
    with ModelServer(SCRIPT) as server:
        variant = VariantSpec(
            harness="claude",
            model=MODEL,
            options={
                "binary": str(cli_binary("claude")),
                "endpoint": endpoint_for(server.base_url),
            },
        )
        plan = make_plan(load_suite(suite), (variant,), 1)
        options = RunOptions(
            results=tmp_path / "results",
            network="loopback",
            sandbox="bwrap",
            price_records=scripted_prices([MODEL]),
        )
        execute(plan, options)
        assert [r.kind for r in server.requests if r.kind in ("error", "overrun")] == []
    [path] = (tmp_path / "results").glob("trials/*/*/*/r*/result.json")
    result = TrialResult.model_validate_json(path.read_text())
    assert result.status == "completed"
    patch = (path.parent / "diff.patch").read_text()
    # Served: the agent got the oracle's answer in its sandbox, and the server logged the case.
    served = [
        json.loads(line) for line in (task / "oracle" / "served.jsonl").read_text().splitlines()
    ]
    assert served == [CASE]
    assert '+["a.log", "b.md"]' in patch, patch[:2000]
    url = next(line[1:] for line in patch.splitlines() if line.startswith("+http://127.0.0.1:"))
    # Gone at grading: nothing listens at the address the agent had, the graded candidate (the
    # starter calling that address) scored 0, and the server answered none of its cases.
    port = int(url.rsplit(":", 1)[1].strip("/"))
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    verdict = result.rounds[-1].grading
    assert verdict.score == 0.0 and verdict.metrics["cases_passed"] == 0
    assert len((task / "oracle" / "served.jsonl").read_text().splitlines()) == 1
