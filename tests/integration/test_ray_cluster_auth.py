"""The test cluster starts whatever an earlier Ray program left in ``~/.ray``: a token there turns
authentication on for a head started bare, but not for the nodes joining it."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from harnessdrive.testing.ray_cluster import LocalRayCluster

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray-cluster")]


def test_a_token_left_in_the_home_folder_does_not_stop_worker_nodes_joining(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text(secrets.token_hex(32) + "\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    cluster = LocalRayCluster(workers=1)
    try:
        raylets = [p for p in cluster.processes() if "raylet" in " ".join(p.cmdline())]
        assert len(raylets) >= 2, "the head's and the worker node's raylets"
    finally:
        cluster.stop()
