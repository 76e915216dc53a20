"""When the watchdog measures a tree and its folders, and when it only reads cheap figures."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.sandbox.limits import GiB, Limits, MiB, Watchdog


class CountingTree:
    """Stands in for a process tree: one process, and how often it was walked."""

    def __init__(self) -> None:
        self.walks = 0

    def __call__(self, stop_after: int | None) -> list[int]:
        self.walks += 1
        return [1]


def test_a_quiet_start_is_not_measured(tmp_path: Path) -> None:
    tree = CountingTree()
    dog = Watchdog(Limits(processes=100_000, memory=1024 * GiB), tree, (tmp_path,))
    assert dog.check() is None
    assert tree.walks == 0


def test_a_suspicious_figure_is_measured_at_once(tmp_path: Path) -> None:
    tree = CountingTree()
    dog = Watchdog(Limits(disk=2 * MiB), tree, (tmp_path,))
    (tmp_path / "filler").write_bytes(b"x" * (8 * MiB))
    assert dog.check() == "disk"
