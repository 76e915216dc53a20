"""How a run wires the sandbox: setup without network unless the task says so, the run's
sandbox recorded in every result."""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path

import pytest

from harnessdrive.cli.variants import resolve_variants
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task
from tests.sandboxes import require_bwrap


@pytest.mark.parametrize("network", ["none", "host"])
def test_setup_reaches_the_network_only_when_the_task_says_so(tmp_path: Path, network: str) -> None:
    require_bwrap()
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def accept_one() -> None:
        with contextlib.suppress(OSError):  # closed unanswered when the setup has no network
            server.accept()[0].close()

    threading.Thread(target=accept_one, daemon=True).start()
    probe = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\""
    )
    task = add_task("net", hidden={}, setup=[probe], extra={"setup": {"network": network}})
    suite = load_suite(write_suite(tmp_path, [task]))
    plan = make_plan(suite, resolve_variants(suite, ["reference"], commands=[], models=[]), 1)
    summary = execute(plan, RunOptions(results=tmp_path / "results", sandbox="bwrap"))
    server.close()
    (result,) = summary.trials
    assert result.sandbox == "bwrap"
    if network == "host":
        assert result.status == "completed" and result.outcome == "pass"
    else:
        assert result.status == "could_not_run"
        assert "setup failed" in (result.agent.error or "")
