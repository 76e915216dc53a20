"""The pieces of a cluster run that need no cluster: what a node's worker processes share, the
relay's view of a proxy's calls, and the charge of a lost try."""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

from harnessdrive.accounting import PriceBook
from harnessdrive.accounting.plan_pricing import price_variants, today
from harnessdrive.accounting.trial_cost import Costing
from harnessdrive.cli.variants import resolve_variants
from harnessdrive.executors.lost_work import lost_try_cost
from harnessdrive.executors.node_cache import (
    NodeSetupStates,
    NodeSnapshots,
    clean_node,
    node_folder,
    register_root,
)
from harnessdrive.proxy import ModelProxy, ProxiedCall
from harnessdrive.proxy.observers import observing_calls
from harnessdrive.running.plan import make_plan
from harnessdrive.sandbox.scratch import make_scratch_root
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.model_server import ModelServer, Script, SideReply, Turn
from harnessdrive.testing.model_server import Usage as ScriptUsage
from harnessdrive.transcript.models import Usage
from harnessdrive.workspace.setup import SetupOutcome
from tests.integration.spending import make_suite, write_prices


def test_two_processes_of_a_node_build_each_snapshot_and_setup_state_once(
    tmp_path: Path,
) -> None:
    suite = load_suite(make_suite(tmp_path, ["reference"]))
    (task,) = suite.tasks
    shared = tmp_path / "node"
    runs: list[Path] = []

    def setup(copy: Path, home: Path, log: Path) -> SetupOutcome:
        runs.append(copy)
        (copy / "installed.txt").write_text("deps\n")
        log.write_text("installed\n")
        return SetupOutcome(("install",), 0, False, 0.0)

    # Two worker processes of one node: each has its own caches over the node's folder.
    first, second = (
        (NodeSnapshots(shared / "snapshots"), NodeSetupStates(shared / "setup-states"))
        for _ in range(2)
    )
    snapshot = first[0].get(task)
    assert second[0].get(task) == snapshot
    state = first[1].get(task, snapshot, "python3", setup)
    again = second[1].get(task, snapshot, "python3", setup)
    assert state is not None and again is not None
    assert len(runs) == 1
    assert again.prototype == state.prototype and again.files == ("installed.txt",)


def test_the_end_of_a_run_removes_every_processs_scratch_on_the_node(tmp_path: Path) -> None:
    folder = node_folder("run0test", "0123456789abcdef")
    roots = [make_scratch_root() for _ in range(2)]
    try:
        for root in roots:
            register_root(folder, root)
            (root / "trial-x").mkdir()
        (folder / "snapshots").mkdir()
        removed = clean_node("run0test")
        assert {str(r) for r in roots} | {str(folder)} <= set(removed)
        assert not folder.exists() and not any(root.exists() for root in roots)
    finally:
        for root in roots:
            if root.exists():
                shutil.rmtree(root)


def test_every_call_a_proxy_records_reaches_an_observer() -> None:
    heard: list[ProxiedCall] = []
    answer = SideReply(usage=ScriptUsage(input=1_000))
    with (
        ModelServer(Script(turns=(Turn(text="ok"),), side_reply=answer)) as server,
        ModelProxy(server.base_url) as proxy,
        observing_calls(heard.append),
    ):
        body = json.dumps(
            {"model": "mock-small", "max_tokens": 9, "messages": [{"role": "user", "content": "x"}]}
        ).encode()
        request = urllib.request.Request(
            proxy.url_for(server.base_url) + "/v1/messages",
            data=body,
            headers={"content-type": "application/json", "x-api-key": "k"},
        )
        urllib.request.urlopen(request, timeout=30).read()
    assert [(c.model, c.status, c.usage) for c in heard] == [
        ("mock-small", 200, Usage(input=1_000))
    ]


def test_a_lost_try_is_charged_its_relayed_calls_and_the_high_estimate_only_without_them(
    tmp_path: Path,
) -> None:
    variant = {
        "harness": "command",
        "name": "cli",
        "model": "mock-small",
        "options": {"template": "true", "model_url": "http://127.0.0.1:9"},
    }
    suite = load_suite(make_suite(tmp_path, [variant]))
    plan = make_plan(suite, resolve_variants(suite, []), 1)
    book = PriceBook.load((write_prices(tmp_path),))
    pricing = price_variants(
        plan.variants, plan.harnesses, book, on=today(), allow_unpriced=frozenset()
    )
    costing = Costing(pricing, book)
    (spec,) = plan.variants
    harness = plan.harnesses[spec.harness]
    call = ProxiedCall(
        method="POST",
        path="/v1/messages",
        generation=True,
        status=200,
        started=0.0,
        seconds=1.0,
        model="mock-small",
        usage=Usage(input=100_000),
    )
    started = "2026-01-02T03:04:05Z"
    known = lost_try_cost(costing, spec, harness, [call], started)
    assert (known.source, known.charged_usd) == ("computed", 0.1)
    unknown = lost_try_cost(costing, spec, harness, [], started)
    assert unknown.source == "estimated"
    assert unknown.charged_usd == costing.if_interrupted(spec, harness).charged_usd > 0.1
