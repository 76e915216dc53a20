"""The Ray executor as an operator who has outgrown one machine runs it: two worker nodes on
127.0.0.1 that see the driver's folder read-only (their own disk), one of them without
bubblewrap on its ``PATH``.

One cluster serves every test here (it takes a while to start); the tests run on one pytest
worker (an xdist group) so no second cluster competes for the two cores.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from harnessdrive.cli.variants import resolve_variants
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunDriver, RunOptions, RunSummary
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.model_server import ModelServer, Script, SideReply, Turn
from harnessdrive.testing.model_server import Usage as ScriptUsage
from harnessdrive.testing.ray_cluster import LocalRayCluster, NodeSetup, path_without
from tests.integration.spending import make_suite, spender, write_prices
from tests.integration.test_improve_resume import _suite as improvement_suite
from tests.trial_results import trial_folder
from tests.waiting import trials_under_way, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray-cluster")]


@dataclass(frozen=True)
class Cluster:
    ray: LocalRayCluster
    driver: Path
    """The driver's folder: suites and results go here; the worker nodes see it read-only."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    driver = Path(tempfile.mkdtemp(prefix="hd-driver-"))
    tools = Path(tempfile.mkdtemp(prefix="hd-path-"))
    nodes = [
        NodeSetup(readonly=(driver,)),
        NodeSetup(env={"PATH": path_without("bwrap", tools)}, readonly=(driver,)),
    ]
    started = LocalRayCluster(workers=2, cpus_per_worker=1, nodes=nodes)
    try:
        yield Cluster(started, driver)
    finally:
        started.stop()
        shutil.rmtree(driver, ignore_errors=True)
        shutil.rmtree(tools, ignore_errors=True)


@pytest.fixture
def area(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[Path]:
    """This test's part of the driver's folder."""
    folder = cluster.driver / request.node.name[:40]
    folder.mkdir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _cli(suite: Path, results: Path, cluster: Cluster, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "harnessdrive",
        "run",
        str(suite),
        "--executor",
        "ray",
        "--address",
        cluster.ray.address,
        "--sandbox",
        "none",
        "--results",
        str(results),
        *extra,
    ]


def _workers_running(cluster: Cluster, needle: str) -> dict[int, psutil.Process]:
    """Each process whose command line holds ``needle`` under a Ray worker, with its worker."""
    workers = {p.pid: p for p in cluster.ray.trial_workers()}
    found: dict[int, psutil.Process] = {}
    for proc in psutil.process_iter(["cmdline"]):
        if needle not in " ".join(proc.info["cmdline"] or ()):
            continue
        with contextlib.suppress(psutil.Error):
            for parent in proc.parents():
                if parent.pid in workers:
                    found[proc.pid] = workers[parent.pid]
                    break
    return found


def _recorded(results: Path) -> dict[str, list[TrialResult]]:
    attempts: dict[str, list[TrialResult]] = {}
    for path in sorted(results.glob("trials/**/result.json")):
        result = TrialResult.model_validate_json(path.read_text())
        attempts.setdefault(result.trial_id, []).append(result)
    return attempts


def test_a_node_without_bubblewrap_never_receives_a_trial(area: Path, cluster: Cluster) -> None:
    suite = make_suite(area, ["reference"], tasks=4)
    loaded = load_suite(suite)
    plan = make_plan(loaded, resolve_variants(loaded, []), 1)
    options = RunOptions(
        results=area / "results",
        sandbox="bwrap",
        jobs=2,
        executor="ray",
        address=cluster.ray.address,
    )
    summary = RunDriver(plan, options).run()
    assert summary.sandbox == "bwrap"
    assert [(r.status, r.outcome) for r in summary.trials] == [("completed", "pass")] * 4
    # Every trial ran on the one node that has bubblewrap, and its result says which.
    nodes = {r.node for r in summary.trials}
    assert len(nodes) == 1 and None not in nodes
    assert all(r.retries == () for r in summary.trials)


AGENT = """
import json, os, sys, time, urllib.request

first = sys.argv[1]
body = json.dumps({"model": "mock-small", "max_tokens": 9,
                   "messages": [{"role": "user", "content": "fix it"}]}).encode()
request = urllib.request.Request(
    os.environ["HARNESSDRIVE_MODEL_URL"] + "/v1/messages", data=body,
    headers={"content-type": "application/json", "x-api-key": "k"})
urllib.request.urlopen(request, timeout=30).read()
if not os.path.exists(first):
    time.sleep(2)  # the proxy has relayed the call by now
    open(first, "w").write("called")
    time.sleep(3600)
open("calc.py", "w").write("def add(a, b):\\n    return a + b\\n")
"""


def test_a_worker_killed_after_real_model_calls_is_charged_them(
    area: Path, tmp_path: Path, cluster: Cluster
) -> None:
    script, first = tmp_path / "agent.py", tmp_path / "first-try-called"
    script.write_text(AGENT)
    # The agent offers no tools: each of its calls gets the side reply, $0.10 of mock-small.
    answer = SideReply(usage=ScriptUsage(input=100_000))
    with ModelServer(Script(turns=(Turn(text="ok"),), side_reply=answer)) as server:
        variant = {
            "harness": "command",
            "name": "cli",
            "model": "mock-small",
            "options": {
                "template": f"{{python}} {script} {first}",
                "model_url": server.base_url,
            },
        }
        suite = make_suite(area, [variant], tasks=1)
        loaded = load_suite(suite)
        plan = make_plan(loaded, resolve_variants(loaded, []), 1)
        options = RunOptions(
            results=area / "results",
            sandbox="none",
            jobs=1,
            executor="ray",
            address=cluster.ray.address,
            price_files=(write_prices(tmp_path),),
            max_usd=10,
        )
        driver = RunDriver(plan, options)
        summaries: list[RunSummary] = []
        runner = threading.Thread(target=lambda: summaries.append(driver.run()))
        runner.start()

        def victim() -> psutil.Process | None:
            assert runner.is_alive() or summaries, "the run ended with an error"
            if not first.exists():
                return None
            return next(iter(_workers_running(cluster, str(script)).values()), None)

        try:
            wait_until(victim, "the first try's agent at work after its call").kill()
        finally:
            runner.join(timeout=300)
    (summary,) = summaries
    (result,) = summary.trials
    assert (result.status, result.outcome) == ("completed", "pass")
    (lost,) = result.retries
    assert lost.reason == "worker_lost" and lost.node
    # The lost try is charged its one call as the proxy counted it, not $0, not an estimate.
    assert lost.charged_usd == pytest.approx(0.10), lost.detail
    assert result.cost.charged_usd >= 0.10
    assert "includes $0.100000 charged for tries lost" in (result.cost.note or "")
    store = Store(options.results)
    try:
        assert store.charged_total() == pytest.approx(result.cost.charged_usd)
    finally:
        store.close()


def test_sigterm_to_the_driver_records_trials_interrupted_and_jobs_fill_the_cluster(
    area: Path, tmp_path: Path, cluster: Cluster
) -> None:
    suite = make_suite(area, [spender("stuck", "mock-small", hang=True)], tasks=2)
    results = area / "results"
    prices = write_prices(tmp_path)
    # No --jobs: on Ray it is the cluster's free slots, one per worker node here.
    command = _cli(suite, results, cluster, "--prices", str(prices))
    driver = subprocess.Popen(
        [*command, "--max-usd", "10"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_until(
            lambda: len(_workers_running(cluster, "sleep 86400")) == 2 or None,
            "both trials' agents at work",
            process=driver,
        )
        assert len(trials_under_way(results)) == 2
    finally:
        driver.send_signal(signal.SIGTERM)
        out, err = driver.communicate(timeout=300)
    assert driver.returncode == 130, out + err
    assert "Running 2 trial(s) at once: the free slots of the ray executor." in out + err
    recorded = _recorded(results)
    assert len(recorded) == 2
    for (result,) in recorded.values():
        assert result.status == "interrupted"
        # The stop reached each trial as a stop: it ended its agent and sent its files back.
        folder = trial_folder(results, f"{result.suite}/{result.task}/stuck/r1")
        assert (folder / "agent.stdout").is_file()
    assert wait_until(
        lambda: not _workers_running(cluster, "sleep 86400") or None, "the agents gone"
    )


def _checkpointed_rounds(results: Path) -> int:
    found = list(results.glob("trials/*/lower/slow/r1/checkpoint.json"))
    return int(json.loads(found[0].read_text())["rounds"]) if found else 0


def test_improvement_trials_resume_from_checkpoints_the_driver_wrote(
    area: Path, tmp_path: Path, cluster: Cluster
) -> None:
    # The workers cannot write the driver's folder: every checkpoint reaches it through Ray.
    log = tmp_path / "rounds.log"
    suite = improvement_suite(area, log)
    results = area / "results"
    command = _cli(suite, results, cluster)
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _checkpointed_rounds(results) == 1, "round 1 recorded", process=driver)
        wait_until(
            lambda: log.read_text().split()[:2] == ["1", "2"], "round 2 under way", process=driver
        )
    finally:
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    [path] = results.glob("trials/*/lower/slow/r1/result.json")
    final = TrialResult.model_validate_json(path.read_text())
    assert final.attempt == 2 and final.status == "completed"
    assert [r.number for r in final.rounds] == [1, 2, 3]
    # Round 1 ran once: the second attempt went on from the checkpoint.
    assert log.read_text().split().count("1") == 1
    assert final.node is not None
