"""Dodges: a failing trial must never come out "could not run" or "not graded".

Each agent here is a small program run by the ``command`` harness whose model calls go to the
scripted model server through harnessdrive's proxy (``model_url``). What it prints, what it
exits with and whether it undoes its own work are the agent's to choose; whether it got to work
and whether the provider refused it for load are the proxy's to say. An honest agent that
prints "429" or exits non-zero after good work is graded on its merits. The same agents run on a
pytest, a unittest and a ``node --test`` task.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.proxy import CALLS_FILE, ProxiedCall
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.model_server import ModelServer, Script, SideReply, Turn
from harnessdrive.testing.model_server import Usage as ScriptUsage
from harnessdrive.testing.suites import TaskFiles
from harnessdrive.transcript.models import Usage
from harnessdrive.trial.job import RetryPolicy
from tests.cli.conftest import TrialRecord, run_trials
from tests.conftest import ADD_BUGGY, ADD_FIXED, add_task
from tests.security.test_runner_attacks import COMMANDS, UNITTEST_HIDDEN, UNITTEST_VISIBLE
from tests.unit.test_grading_runner import node_task

pytestmark = [pytest.mark.security, pytest.mark.slow]

SENT = ScriptUsage(input=100, output=20)
QUICK = RetryPolicy(tries=3, base_seconds=0.01, max_seconds=0.02)
PROVIDER_429 = (
    'API Error: 429 {"type":"error","error":{"type":"rate_limit_error",'
    '"message":"Number of requests has exceeded your rate limit"}}'
)
NODE_FIXED = "exports.add = (a, b) => a + b;\n"
NODE_BROKEN = "exports.add = () => 0;\n"
AGENT = f"""
import json, os, sys, urllib.error, urllib.request

def call():
    body = json.dumps({{"model": "m", "max_tokens": 9,
                       "messages": [{{"role": "user", "content": "fix it"}}]}}).encode()
    request = urllib.request.Request(
        os.environ["HARNESSDRIVE_MODEL_URL"] + "/v1/messages", data=body,
        headers={{"content-type": "application/json", "x-api-key": "k"}})
    try:
        urllib.request.urlopen(request, timeout=30).read()
    except urllib.error.HTTPError as error:
        print("API Error:", error.code, error.read().decode(), file=sys.stderr)

# The file to change and its versions: the node task's, or the Python tasks'.
NODE = os.path.exists("calc.js")
TARGET = "calc.js" if NODE else "calc.py"
FIXED = {NODE_FIXED!r} if NODE else {ADD_FIXED!r}
BROKEN = {NODE_BROKEN!r} if NODE else "def add(a, b):\\n    return 0\\n"
ORIGINAL = open(TARGET).read()

for step in sys.argv[1:]:
    if step == "call":
        call()
    elif step == "fix":
        open(TARGET, "w").write(FIXED)
    elif step == "break":
        open(TARGET, "w").write(BROKEN)
    elif step == "revert":
        open(TARGET, "w").write(ORIGINAL)
    elif step == "say-429":
        print({PROVIDER_429!r}, file=sys.stderr)
        print("Error: HTTP 429 Too Many Requests; rate limit exceeded, overloaded_error")
    elif step == "say-signed-out":
        print("Invalid API key · Please run /login", file=sys.stderr)
    elif step.startswith("exit"):
        sys.exit(int(step[4:]))
"""


@pytest.fixture
def agent_script(tmp_path: Path) -> Path:
    path = tmp_path / "agent.py"
    path.write_text(AGENT)
    return path


def _agent(name: str, script: Path, server: ModelServer, *steps: str) -> VariantSpec:
    return VariantSpec(
        harness="command",
        name=name,
        options={
            "template": f"{{python}} {script} {' '.join(steps)}",
            "show": [str(script)],
            "model_url": server.base_url,
        },
    )


def _by_label(records: list[TrialRecord]) -> dict[str, TrialRecord]:
    return {record.result.variant_label: record for record in records}


def _tasks() -> list[TaskFiles]:
    """The same bug to fix under each runner: pytest, unittest and ``node --test``."""
    unittest = TaskFiles(
        "unittest",
        files={"calc.py": ADD_BUGGY, "tests/test_visible.py": UNITTEST_VISIBLE},
        hidden={"tests/test_hidden.py": UNITTEST_HIDDEN},
        solution={"calc.py": ADD_FIXED},
        protected=["tests/**"],
        command=COMMANDS["unittest"],
        visible_command=COMMANDS["unittest"],
    )
    return [add_task("pytest"), unittest, node_task()]


def test_what_the_agent_prints_or_exits_with_never_makes_a_trial_not_counted(
    tmp_path: Path, agent_script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A request that offers no tools is a side request to the scripted server: it answers
    # with the side reply.
    script = Script(turns=(Turn(text="ok"),), side_reply=SideReply(usage=SENT))
    with ModelServer(script) as server:
        variants = [
            # Fails, then prints a provider's refusal and exits as a CLI giving up would.
            _agent("dodge-429", agent_script, server, "call", "break", "say-429", "exit1"),
            # Fails, undoes its own work, claims it was never signed in, exits 1.
            _agent(
                "dodge-revert",
                agent_script,
                server,
                "call",
                "break",
                "revert",
                "say-signed-out",
                "exit1",
            ),
            # Honest work whose output happens to say 429, exiting non-zero.
            _agent("honest-429", agent_script, server, "call", "fix", "say-429", "exit1"),
            _agent("honest-exit", agent_script, server, "call", "fix", "exit3"),
        ]
        summary, records = run_trials(tmp_path, _tasks(), variants, retry=QUICK, jobs=2)
    verdicts = {
        (r.result.task, r.result.variant_label): (r.result.status, r.result.outcome)
        for r in records
    }
    expected = {
        "dodge-429": ("crashed", "fail"),
        "dodge-revert": ("crashed", "fail"),
        "honest-429": ("crashed", "pass"),
        "honest-exit": ("crashed", "pass"),
    }
    assert verdicts == {
        (task, label): verdict
        for task in ("pytest", "unittest", "node-add")
        for label, verdict in expected.items()
    }
    for record in records:
        assert record.result.retries == ()  # the provider answered every call: nothing re-run
        traffic = record.result.agent.traffic
        assert traffic is not None and (traffic.answered, traffic.last_status) == (1, 200)
        kept = (record.folder / CALLS_FILE).read_text().splitlines()
        assert [ProxiedCall.model_validate_json(line).status for line in kept] == [200]
        # A second count of the tokens, beside the agent's own (which reports none here).
        cost = record.result.cost
        assert cost.proxy_usage == Usage(input=100, output=20) and cost.usage_mismatch
    assert not summary.skipped_harnesses
    shown = ["show", "node-add/honest-exit/r1", "--results", str(tmp_path / "results")]
    assert run_cli(shown) == 0
    assert "tokens seen by the proxy: 120 (DISAGREES with the CLI's log)" in capsys.readouterr().out


def test_the_providers_own_429s_are_retried_and_every_try_recorded(
    tmp_path: Path, agent_script: Path
) -> None:
    script = Script(turns=(Turn(text="ok"),), refusals=(429, 529))
    with ModelServer(script) as server:
        # Refused twice (the CLI gives up each time), answered on the third try.
        variants = [_agent("busy", agent_script, server, "call", "fix")]
        _, records = run_trials(tmp_path, [add_task()], variants, retry=QUICK)
    (record,) = records
    result = record.result
    assert (result.status, result.outcome) == ("completed", "pass")
    assert [(e.reason, e.status, e.outcome) for e in result.retries] == [
        ("rate_limited", "could_not_run", "not_graded"),
        ("rate_limited", "could_not_run", "not_graded"),
    ]
    assert "HTTP 429" in result.retries[0].detail and "HTTP 529" in result.retries[1].detail
    for number, status in ((1, 429), (2, 529)):
        kept = (record.folder / "retries" / str(number) / CALLS_FILE).read_text()
        assert ProxiedCall.model_validate_json(kept).status == status


def test_refused_before_any_answer_on_every_try_is_the_only_not_counted(
    tmp_path: Path, agent_script: Path
) -> None:
    script = Script(turns=(Turn(text="ok"),), refusals=(429, 429, 429))
    with ModelServer(script) as server:
        variants = [_agent("refused", agent_script, server, "call", "fix", "exit1")]
        _, records = run_trials(tmp_path, [add_task()], variants, retry=QUICK)
    (record,) = records
    assert (record.result.status, record.result.outcome) == ("could_not_run", "not_graded")
    assert len(record.result.retries) == 3
    assert "refused for load on all 3 tries" in (record.result.agent.error or "")


def test_an_agent_that_never_reaches_the_model_could_not_run(
    tmp_path: Path, agent_script: Path
) -> None:
    refusing = ModelServer(Script(turns=(Turn(text="ok"),), refusals=(401,)))
    with ModelServer(Script(turns=(Turn(text="ok"),))) as server, refusing:
        variants = [
            # The binary does not exist: the proxy sees nothing.
            VariantSpec(
                harness="command",
                name="no-binary",
                options={"template": "/nonexistent/agent-cli", "model_url": server.base_url},
            ),
            # It runs but never calls the model.
            _agent("no-call", agent_script, server, "exit1"),
            # The provider turns its key away (it still writes a change and exits 0).
            _agent("bad-key", agent_script, refusing, "call", "fix"),
        ]
        summary, records = run_trials(tmp_path, [add_task()], variants)
    by_label = _by_label(records)
    for label in ("no-binary", "no-call", "bad-key"):
        result = by_label[label].result
        assert (result.status, result.outcome) == ("could_not_run", "not_graded"), label
        assert result.agent.traffic is not None
    silent = by_label["no-call"].result.agent.traffic
    assert silent is not None and silent.calls == 0
    assert "no model request reached" in (by_label["no-call"].result.agent.error or "")
    assert "refused the key (HTTP 401 x1)" in (by_label["bad-key"].result.agent.error or "")
    assert summary.trials


def test_a_command_that_starts_a_missing_program_could_not_run_and_one_that_exits_127_is_graded(
    tmp_path: Path,
) -> None:
    """Without the proxy, harnessdrive's own look for the program decides, past ``exec`` and
    variable assignments; an exit status of 127 alone is the command's own word."""
    variants = [
        VariantSpec(harness="command", name=name, options={"template": template})
        for name, template in (
            ("exec-missing", "exec no-such-agent-binary-4711"),
            ("assigned-missing", "MODE=fast no-such-agent-binary-4711 --go"),
            ("says-127", "exec sh -c 'exit 127'"),
        )
    ]
    _, records = run_trials(tmp_path, [add_task()], variants)
    by_label = _by_label(records)
    for label in ("exec-missing", "assigned-missing"):
        result = by_label[label].result
        assert (result.status, result.outcome) == ("could_not_run", "not_graded"), label
    said = by_label["says-127"].result
    assert said.status != "could_not_run" and said.outcome == "fail"
