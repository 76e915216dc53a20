"""The Ray executor on a real local cluster: a head and two worker nodes on 127.0.0.1.

One cluster serves every test here (it takes a while to start); the tests run on one pytest
worker (an xdist group) so no second cluster competes for the two cores.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from harnessdrive.cli.variants import resolve_variants
from harnessdrive.executors.interface import ExecutorEntry
from harnessdrive.executors.ray_worker import harnessdrive_version
from harnessdrive.plugins.hookspecs import hookimpl
from harnessdrive.plugins.manager import plugin_manager
from harnessdrive.running.plan import make_plan
from harnessdrive.running.progress import SilentProgress
from harnessdrive.running.run import RunDriver, RunOptions, RunSummary
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.ray_cluster import LocalRayCluster
from harnessdrive.trial.job import WorkerSettings
from tests.integration.spending import (
    SMALL_HIGH,
    make_suite,
    run_suite,
    small_calls,
    spender,
    write_prices,
)
from tests.integration.test_live_phases import run_gated
from tests.trial_results import trial_folder
from tests.waiting import trials_under_way, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray-cluster")]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalRayCluster]:
    started = LocalRayCluster(workers=2, cpus_per_worker=1)
    try:
        yield started
    finally:
        started.stop()


def folder_of(results: Path, result: TrialResult) -> Path:
    planned = f"{result.suite}/{result.task}/{result.variant_label}/r{result.repetition}"
    return trial_folder(results, planned)


def verdicts(summary: RunSummary) -> dict[str, tuple[str, str]]:
    return {r.trial_id: (r.status, r.outcome) for r in summary.trials}


def spans(results: Path, summary: RunSummary, label: str) -> list[tuple[float, float]]:
    found = []
    for result in summary.trials:
        if result.variant_label == label:
            log = json.loads((folder_of(results, result) / "spender.json").read_text())
            found.append((log["began"], log["ended"]))
    return sorted(found)


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    edges = sorted([(b, 1) for b, _ in intervals] + [(e, -1) for _, e in intervals])
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return peak


def test_a_20_trial_suite_gets_the_local_verdicts_with_files_shipped_both_ways(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    prices = write_prices(tmp_path)
    slow = spender("slow", "mock-small", calls=small_calls(0.01), seconds=0.4)
    suite = make_suite(tmp_path, ["reference", "noop", "breaker", slow], tasks=5)
    common: dict[str, Any] = {"prices": prices, "max_usd": 100, "jobs": 2}
    local = run_suite(suite, tmp_path / "local", **common)
    on_ray = run_suite(
        suite,
        tmp_path / "ray",
        executor="ray",
        address=cluster.address,
        limits={"slow": 1},
        **{**common, "jobs": 4},
    )
    assert len(on_ray.trials) == 20
    assert verdicts(on_ray) == verdicts(local)
    assert {o for _, o in verdicts(on_ray).values()} == {"pass", "fail"}
    for result in on_ray.trials:
        folder = folder_of(tmp_path / "ray", result)
        # The trial's files came back through Ray and were adopted by the driver.
        assert (folder / "diff.patch").is_file() and (folder / "transcript.json").is_file()
        assert (folder / "prompt.md").read_text() == "Make the tests pass."
        # The workspace was built from the shipped copy of the task, not the driver's folder.
        assert result.base_source is not None and str(suite) not in result.base_source
        assert result.retries == ()
    costs = sorted(r.cost.charged_usd for r in on_ray.trials if r.variant_label == "slow")
    assert costs == [0.01] * 5
    # The per-variant limit held across both worker nodes though four trials ran at once.
    assert most_at_once(spans(tmp_path / "ray", on_ray, "slow")) == 1


def test_a_cap_for_half_of_a_priced_suite_stops_within_one_high_estimate_like_local(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(tmp_path, [spender("paid", "mock-small", calls=small_calls(0.30))], tasks=10)
    cap = 1.5  # five of the ten trials' $0.30
    counted = {}
    for name, extra in (("local", {}), ("ray", {"executor": "ray", "address": cluster.address})):
        summary = run_suite(suite, tmp_path / name, prices=prices, max_usd=cap, jobs=4, **extra)
        store = Store(tmp_path / name)
        try:
            counted[name] = round(store.charged_total(), 6)
        finally:
            store.close()
        statuses = [r.status for r in summary.trials]
        assert statuses.count("skipped") > 0 and "interrupted" not in statuses
        assert cap - SMALL_HIGH < counted[name] <= cap + SMALL_HIGH
    assert counted["ray"] == counted["local"]


def test_a_worker_killed_mid_trial_is_rerun_and_the_loss_recorded(
    tmp_path: Path, cluster: LocalRayCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(tmp_path, [spender("long", "mock-small", seconds=4)], tasks=2)
    loaded = load_suite(suite)
    plan = make_plan(loaded, resolve_variants(loaded, []), 1)
    options = RunOptions(
        results=tmp_path / "results",
        sandbox="none",
        jobs=2,
        executor="ray",
        address=cluster.address,
        price_files=(prices,),
        max_usd=10,
    )
    driver = RunDriver(plan, options)
    summaries: list[RunSummary] = []
    runner = threading.Thread(target=lambda: summaries.append(driver.run()))
    runner.start()

    def victim() -> psutil.Process | None:
        assert runner.is_alive() or summaries, "the run ended with an error"
        return _running_a_trial(cluster)

    try:
        wait_until(victim, "a Ray worker running a trial").kill()
    finally:
        runner.join(timeout=180)
    (summary,) = summaries
    assert [r.status for r in summary.trials] == ["completed", "completed"]
    assert {r.outcome for r in summary.trials} == {"pass"}
    lost = [r for r in summary.trials if r.retries]
    assert len(lost) == 1
    (event,) = lost[0].retries
    assert event.reason == "worker_lost" and event.detail
    recorded = json.loads((folder_of(options.results, lost[0]) / "result.json").read_text())
    assert recorded["retries"][0]["reason"] == "worker_lost"
    assert [r.attempt for r in summary.trials] == [1, 1]  # rerun inside the one attempt
    # Ray's own word on the dead worker goes to the run's log, not the terminal.
    log = options.results / "runs" / f"{plan.run_id}.log"
    wait_until(
        lambda: log.is_file() and "(raylet) A worker died" in log.read_text(),
        "Ray's message about the killed worker in the run's log",
    )
    printed = capsys.readouterr()
    assert "A worker died" not in printed.out + printed.err


def _running_a_trial(
    cluster: LocalRayCluster, agent: tuple[str, ...] = ("sleep", "4")
) -> psutil.Process | None:
    """The Ray worker process whose trial's agent is at work (``agent``, its command line)."""
    return next(iter(_agents_at_work(cluster, agent).values()), None)


def _agents_at_work(cluster: LocalRayCluster, agent: tuple[str, ...]) -> dict[int, psutil.Process]:
    """Each agent (``agent``, its command line) under a Ray worker, with its worker, by pid."""
    workers = {p.pid: p for p in cluster.trial_workers()}
    found: dict[int, psutil.Process] = {}
    for proc in psutil.process_iter(["name", "cmdline"]):
        if tuple(proc.info["cmdline"] or ()) != agent:
            continue
        try:
            parents = proc.parents()
        except psutil.Error:
            continue
        for parent in parents:
            if parent.pid in workers:
                found[proc.pid] = workers[parent.pid]
                break
    return found


def test_a_stopped_run_records_the_trials_on_the_cluster_as_interrupted(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    suite = make_suite(tmp_path, [spender("stuck", "mock-small", hang=True)], tasks=3)
    loaded = load_suite(suite)
    plan = make_plan(loaded, resolve_variants(loaded, []), 1)
    options = RunOptions(
        results=tmp_path / "results",
        sandbox="none",
        jobs=2,
        executor="ray",
        address=cluster.address,
        price_files=(write_prices(tmp_path),),
        max_usd=10,
    )
    driver = RunDriver(plan, options)
    summaries: list[RunSummary] = []
    runner = threading.Thread(target=lambda: summaries.append(driver.run()))
    runner.start()
    try:
        # Both trials' agents must be at work before the stop, or one is stopped before its agent
        # ever wrote a file.
        wait_until(
            lambda: len(_agents_at_work(cluster, ("sleep", "86400"))) == 2 or None,
            "both trials' agents at work",
        )
    finally:
        driver.stop()
        runner.join(timeout=180)
    (summary,) = summaries
    assert summary.interrupted
    assert [r.status for r in summary.trials] == ["interrupted", "interrupted"]
    for result in summary.trials:
        # The stop reached each trial as a stop: it ended its agent and sent its files back.
        assert (folder_of(options.results, result) / "agent.stdout").is_file()
    assert wait_until(
        lambda: _running_a_trial(cluster, ("sleep", "86400")) is None, "the agents gone"
    )


class _OlderDriver:
    """Registers an executor whose driver claims another harnessdrive version."""

    @hookimpl
    def harnessdrive_executors(self) -> list[ExecutorEntry]:
        from harnessdrive.executors.ray_executor import RayExecutor

        def create(settings: WorkerSettings) -> RayExecutor:
            return RayExecutor(settings, driver_version="0.0.1")

        return [ExecutorEntry("ray-older-driver", create)]


def test_a_worker_without_a_requirement_refuses_and_the_driver_says_so_once(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    suite = make_suite(tmp_path, ["reference"], tasks=3)
    loaded = load_suite(suite)
    plan = make_plan(loaded, resolve_variants(loaded, []), 1)
    messages: list[str] = []

    class Progress(SilentProgress):
        def message(self, text: str) -> None:
            messages.append(text)

    plugin = _OlderDriver()
    plugin_manager().register(plugin)
    try:
        options = RunOptions(
            results=tmp_path / "results",
            sandbox="none",
            executor="ray-older-driver",
            address=cluster.address,
        )
        summary = RunDriver(plan, options, Progress()).run()
    finally:
        plugin_manager().unregister(plugin)
    first, *rest = summary.trials
    assert first.status == "could_not_run"
    here = harnessdrive_version()
    assert f"harnessdrive {here} is installed here, the driver runs 0.0.1" in (
        first.agent.error or ""
    )
    assert first.cost.charged_usd == 0 and first.note and "nothing ran" in first.note
    assert [r.status for r in rest] == ["skipped", "skipped"]
    refusals = [m for m in messages if "refused it" in m]
    assert len(refusals) == 1 and "the driver runs 0.0.1" in refusals[0]


def test_a_driver_killed_with_sigkill_resumes_on_the_cluster_recording_nothing_twice(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    prices = write_prices(tmp_path)
    paid = spender("paid", "mock-small", calls=small_calls(0.05), seconds=3)
    suite = make_suite(tmp_path, [paid], tasks=3)
    results = tmp_path / "results"
    command = [
        sys.executable,
        "-m",
        "harnessdrive.cli",
        "run",
        str(suite),
        "--executor",
        "ray",
        "--address",
        cluster.address,
        "--jobs",
        "2",
        "--sandbox",
        "none",
        "--prices",
        str(prices),
        "--max-usd",
        "10",
        "--results",
        str(results),
    ]
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        in_flight = wait_until(
            lambda: trials_under_way(results), "a trial under way", process=driver
        )
    finally:
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    attempts: dict[str, list[TrialResult]] = {}
    for path in sorted(results.glob("trials/**/result.json")):
        result = TrialResult.model_validate_json(path.read_text())
        attempts.setdefault(result.trial_id, []).append(result)
    assert len(attempts) == 3
    for trial_id, recorded in attempts.items():
        recorded.sort(key=lambda r: r.attempt)
        assert recorded[-1].status == "completed"
        if trial_id in in_flight:
            # Charged as a trial cut off, then run again: one attempt each, never twice.
            assert [r.status for r in recorded] == ["interrupted", "completed"]
            assert recorded[0].cost.charged_usd > 0
        else:
            assert len(recorded) == 1


def test_a_trial_on_the_cluster_shows_its_phases_turns_and_spend_to_the_driver(
    tmp_path: Path, cluster: LocalRayCluster
) -> None:
    # Each phase waits until the driver's progress has shown it, relayed from the worker.
    gated = run_gated(tmp_path, watch=False, executor="ray", address=cluster.address)
    (result,) = gated.summary.trials
    assert (result.status, result.outcome) == ("completed", "pass")
    assert result.node is not None
