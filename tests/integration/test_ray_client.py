"""A run through Ray Client (``--address ray://...``) stopped by a signal to its driver.

The driver is a Ray Client: it is on no node of the cluster, and its tasks run on behalf of a
server process on the head. A stop must still reach every trial as a stop (each hands back its
interrupted result, its spend and its files), and no task may go on after the driver is gone.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store
from harnessdrive.testing.ray_cluster import LocalRayCluster, ray_client_available
from tests.integration.spending import make_suite, small_calls, spender, write_prices
from tests.trial_results import trial_folder
from tests.waiting import trials_under_way, wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("ray-cluster"),
    pytest.mark.skipif(
        not ray_client_available(), reason="Ray Client needs gRPC: pip install 'ray[client]'"
    ),
]

AGENT = "sleep 86400"


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalRayCluster]:
    started = LocalRayCluster(workers=1, cpus_per_worker=2)
    try:
        assert started.client_address is not None
        yield started
    finally:
        started.stop()


def _agents(cluster: LocalRayCluster) -> list[psutil.Process]:
    """The trials' agents still at work under the cluster's worker processes."""
    workers = {p.pid for p in cluster.trial_workers()}
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if " ".join(proc.info["cmdline"] or ()) != AGENT:
            continue
        try:
            if any(parent.pid in workers for parent in proc.parents()):
                found.append(proc)
        except psutil.Error:
            continue
    return found


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_ray_client_driver_stopped_by_a_signal_records_its_trials_and_cancels_their_tasks(
    cluster: LocalRayCluster, tmp_path: Path, stop: signal.Signals
) -> None:
    # Each trial works until stopped; stopped, it reports the $0.05 call it made meanwhile.
    stuck = spender("stuck", "mock-small", hang=True, partial_calls=small_calls(0.05))
    suite = make_suite(tmp_path, [stuck], tasks=2)
    results = tmp_path / "results"
    command = [
        sys.executable,
        "-m",
        "harnessdrive",
        "run",
        str(suite),
        "--executor",
        "ray",
        "--address",
        str(cluster.client_address),
        "--sandbox",
        "none",
        "--jobs",
        "2",
        "--results",
        str(results),
        "--prices",
        str(write_prices(tmp_path)),
        "--max-usd",
        "10",
    ]
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        both = lambda: len(_agents(cluster)) == 2 or None  # noqa: E731
        wait_until(both, "both trials' agents at work", process=driver)
        assert len(trials_under_way(results)) == 2
    finally:
        driver.send_signal(stop)
        out, err = driver.communicate(timeout=300)
    assert driver.returncode == 130, out[-2000:] + err[-2000:]
    attempts = sorted(results.glob("trials/**/result.json"))
    assert len(attempts) == 2, out + err
    for path in attempts:
        result = TrialResult.model_validate_json(path.read_text())
        assert result.status == "interrupted"
        # The stop reached the trial as a stop: it charged what it spent and sent its files.
        assert result.cost.charged_usd == pytest.approx(0.05), result.cost
        assert result.node is not None
        folder = trial_folder(results, f"{result.suite}/{result.task}/stuck/r1")
        assert (folder / "agent.stdout").is_file()
    assert not trials_under_way(results)
    store = Store(results)
    try:
        assert store.charged_total() == pytest.approx(0.10)
    finally:
        store.close()
    # Nothing the run started goes on without its driver.
    assert wait_until(lambda: not _agents(cluster) or None, "the agents gone")
