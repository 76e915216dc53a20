"""The 429 dodge on the other kinds of task: an agent that gets an answer from the model, breaks
the code, prints a provider's rate-limit refusal and exits 1 is graded ``fail`` on an improvement
task and on a differential task, as on a plain one (test_dodges.py): never "could not run",
never re-run. The proxy saw the model answer; what the agent printed does not count."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harnessdrive.demo import DEMO_SUITE
from harnessdrive.demo.scripted import scripted_prices
from harnessdrive.proxy import CALLS_FILE, ProxiedCall
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.model_server import ModelServer, Script, Turn
from tests.security.test_dodges import PROVIDER_429, QUICK, _agent

pytestmark = [pytest.mark.security, pytest.mark.slow]

# Which task it is on is read from the files it finds: the improvement task's finder, or the
# differential task's rules (whose starter asks a service that is gone at grading).
BREAKING_AGENT = f"""
import json, os, sys, urllib.request

body = json.dumps({{"model": "m", "max_tokens": 9,
                   "messages": [{{"role": "user", "content": "improve it"}}]}}).encode()
request = urllib.request.Request(
    os.environ["HARNESSDRIVE_MODEL_URL"] + "/v1/messages", data=body,
    headers={{"content-type": "application/json", "x-api-key": "k"}})
urllib.request.urlopen(request, timeout=30).read()
if os.path.exists("dupes/finder.py"):
    open("dupes/finder.py", "w").write("def repeated(keys):\\n    return []\\n")
else:
    open("skiplist/rules.py", "w").write("def skipped(case):\\n    return []\\n")
print({PROVIDER_429!r}, file=sys.stderr)
print("Error: HTTP 429 Too Many Requests; rate limit exceeded, overloaded_error")
sys.exit(1)
"""
TASKS = ("fewer-comparisons", "skiplist")
STATUS = {"fewer-comparisons": "completed", "skiplist": "crashed"}


def _demo_subset(folder: Path) -> Path:
    """The demo suite, with only the improvement and the differential task listed."""
    shutil.copytree(DEMO_SUITE, folder)
    listed = ", ".join(f'"tasks/{task}"' for task in TASKS)
    (folder / "suite.toml").write_text(f'name = "dodge-kinds"\ntasks = [{listed}]\n')
    return folder


def test_a_printed_429_after_failing_is_fail_on_improvement_and_differential_tasks(
    tmp_path: Path,
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(BREAKING_AGENT)
    suite = load_suite(_demo_subset(tmp_path / "suite"))
    with ModelServer(Script(turns=(Turn(text="ok"),) * 4)) as server:
        variant = _agent("dodge-429", agent, server)
        plan = make_plan(suite, (variant,), 1)
        options = RunOptions(
            results=tmp_path / "results",
            network="loopback",
            retry=QUICK,
            price_records=scripted_prices(),
        )
        execute(plan, options)
    paths = sorted((tmp_path / "results").glob("trials/*/*/*/r*/result.json"))
    results = {
        result.task: (result, path.parent)
        for result, path in ((TrialResult.model_validate_json(p.read_text()), p) for p in paths)
    }
    assert sorted(results) == sorted(TASKS)
    for task, (result, folder) in results.items():
        # Graded on its work: the improvement trial ran its rounds to the end, the differential
        # one crashed (exit 1); both failed.
        assert (result.status, result.outcome) == (STATUS[task], "fail"), (task, result.agent)
        assert result.agent.exit_code == 1
        assert result.retries == (), task  # the provider answered: nothing re-run
        traffic = result.agent.traffic
        assert traffic is not None and traffic.last_status == 200, task
        for calls in folder.rglob(CALLS_FILE):
            statuses = {
                ProxiedCall.model_validate_json(line).status
                for line in calls.read_text().splitlines()
            }
            assert statuses == {200}, (task, calls)
        assert "429" in (folder / "agent.stdout").read_text(), task
