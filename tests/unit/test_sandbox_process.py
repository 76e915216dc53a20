"""Deadlines, whole-tree kill and limits, with real processes, under both back-ends."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.limits import Limits, MiB
from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import Isolation
from tests.sandboxes import Box, make_box, sandbox_of
from tests.waiting import wait_until

KINDS = ["none", "bwrap"]


def box_for(tmp_path: Path, kind: str, limits: Limits | None = None) -> Box:
    return make_box(tmp_path / "box", sandbox_of(kind, limits=limits))


def processes_with(token: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if token in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_exit_code_and_output(tmp_path: Path, kind: str) -> None:
    box = box_for(tmp_path, kind)
    result = box.run("echo out; echo err >&2; exit 3")
    assert result.exit_code == 3 and not result.timed_out and result.limit is None
    assert box.output() == "out\n" and box.errors() == "err\n"


@pytest.mark.parametrize("kind", KINDS)
def test_a_deadline_kills_the_tree_and_its_daemons(tmp_path: Path, kind: str) -> None:
    box = box_for(tmp_path, kind)
    token = f"hd-{uuid.uuid4().hex[:10]}"
    script = (
        f"(setsid bash -c 'exec -a {token}-daemon sleep 300' &); "
        f"bash -c 'exec -a {token}-child sleep 300' & "
        f"exec -a {token}-main sleep 300"
    )
    # How soon after the deadline the tree is gone: benchmarks/stopping.py.
    result = box.run(script, timeout=1.0)
    assert result.timed_out
    assert processes_with(token) == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_daemon_is_gone_when_its_command_exits(tmp_path: Path, kind: str) -> None:
    box = box_for(tmp_path, kind)
    token = f"hd-{uuid.uuid4().hex[:10]}"
    # Double fork, new session, output detached: a classic daemon.
    result = box.run(f"(setsid nohup bash -c 'exec -a {token} sleep 300' >/dev/null 2>&1 &); :")
    assert result.exit_code == 0
    assert processes_with(token) == []


def test_only_bwrap_catches_a_daemon_that_also_drops_its_environment(tmp_path: Path) -> None:
    box = box_for(tmp_path, "bwrap")
    token = f"hd-{uuid.uuid4().hex[:10]}"
    result = box.run(f"cd / && (setsid env -i bash -c 'exec -a {token} sleep 300' &); :")
    assert result.exit_code == 0
    assert processes_with(token) == []


@pytest.mark.parametrize("kind", KINDS)
def test_stop_ends_the_command_promptly(tmp_path: Path, kind: str) -> None:
    box = box_for(tmp_path, kind)
    stop = StopToken()
    stop.stop()
    result = box.sandbox.run(
        ["sleep", "300"],
        cwd=box.work,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
        stdout=box.out,
        stderr=box.err,
        isolation=Isolation(writable=(box.work,)),
        stop=stop,
    )
    assert result.stopped and not result.ok


@pytest.mark.parametrize("kind", KINDS)
def test_the_file_size_limit_holds_and_is_recorded(tmp_path: Path, kind: str) -> None:
    box = box_for(tmp_path, kind, Limits(file_size=4 * MiB))
    # The writer's own end (SIGXFSZ) tells; the file stops at the limit either way.
    result = box.run("head -c 50M /dev/zero > big")
    assert (box.work / "big").stat().st_size == 4 * MiB
    assert result.limit == "file_size" and not result.ok
    result = box.run("head -c 50M /dev/zero > big2; exit 0")
    assert (box.work / "big2").stat().st_size == 4 * MiB


@pytest.mark.parametrize("kind", KINDS)
def test_the_disk_limit_stops_a_disk_filler(tmp_path: Path, kind: str) -> None:
    box = box_for(tmp_path, kind, Limits(file_size=4 * MiB, disk=16 * MiB))
    script = "for i in $(seq 50); do head -c 3M /dev/zero > f$i; sleep 0.05; done; sleep 30"
    result = box.run(script)
    assert result.limit == "disk"
    assert not result.timed_out  # stopped by the limit, before its deadline
    assert len(list(box.work.glob("f*"))) < 50


@pytest.mark.parametrize("kind", KINDS)
def test_the_memory_limit_stops_a_tree_that_uses_too_much(tmp_path: Path, kind: str) -> None:
    box = box_for(tmp_path, kind, Limits(memory=160 * MiB))
    # Each process stays under the per-process limit; together they do not.
    hog = "python3 -c 'b = bytearray(100 * 1024 * 1024); import time; time.sleep(30)'"
    result = box.run(f"for i in 1 2 3 4; do {hog} & done; wait")
    assert result.limit == "memory"
    assert not result.timed_out  # stopped by the limit, before its deadline


@pytest.mark.parametrize("kind", KINDS)
def test_the_process_limit_stops_a_spawner(tmp_path: Path, kind: str) -> None:
    box = box_for(tmp_path, kind, Limits(processes=20))
    result = box.run("for i in $(seq 200); do sleep 30 & done; wait")
    assert result.limit == "processes"
    assert not result.timed_out  # stopped by the limit, before its deadline


@pytest.mark.solo
def test_a_fork_bomb_is_contained_in_bwrap(tmp_path: Path) -> None:
    # Stopped by its process limit, long before its deadline; how fast, benchmarks/fork_bomb.py.
    box = box_for(tmp_path, "bwrap", Limits(processes=64))
    result = box.run(":(){ :|:& };:; sleep 30", timeout=30)
    assert result.limit == "processes" and not result.timed_out


def test_limits_never_ask_for_more_than_the_hard_limit_in_force() -> None:
    # Inside a trial of its own (or a container) raising a hard limit fails even for root:
    # the limits then stay at what is allowed instead of failing every command.
    code = (
        "import resource; from harnessdrive.sandbox.limits import Limits; "
        "resource.setrlimit(resource.RLIMIT_FSIZE, (5000, 5000)); "
        "print(Limits(file_size=10**9, processes=None, memory=None).prlimit_argv(1))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['--fsize=5000']"


@pytest.mark.parametrize("kind", KINDS)
def test_the_kernel_process_limit_is_set_only_where_the_kernel_counts(
    tmp_path: Path, kind: str
) -> None:
    # The kernel never counts root's processes, so for root the limit is left as it was.
    limits = Limits(processes=50, memory=None, file_size=None, disk=None)
    box = box_for(tmp_path, kind, limits)
    script = "import resource; print(resource.getrlimit(resource.RLIMIT_NPROC)[1])"
    result = box.run(f"{sys.executable} -c '{script}'")
    assert result.exit_code == 0, box.errors()
    hard = int(box.output())
    inherited = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    if os.geteuid() == 0:
        assert hard == inherited
    else:  # 16 threads per process, on top of the tasks running now; never above the hard one
        assert min(50 * 16, inherited) <= hard < 50 * 16 + 100_000


def test_the_run_time_ends_when_the_command_exits_not_after_the_cleanup(tmp_path: Path) -> None:
    # The command leaves a child that ignores SIGTERM: ending it takes the tree kill's wait for
    # the polite signal (0.2 s) before SIGKILL. That wait is ours, not the command's time. The
    # command exits only once the child ignores SIGTERM (it says so with a file).
    box = box_for(tmp_path, "none")
    started = time.monotonic()
    child = "(trap '' TERM; : > ignoring; exec sleep 60) &"
    result = box.run(child + " until [ -e ignoring ]; do :; done")
    wall = time.monotonic() - started
    assert result.exit_code == 0
    assert result.seconds + 0.2 <= wall


@pytest.mark.parametrize("kind", KINDS)
def test_the_command_starts_once_the_work_meanwhile_is_done(tmp_path: Path, kind: str) -> None:
    box = box_for(tmp_path, kind)
    done: list[float] = []

    def prepare() -> None:
        (box.work / "prepared").write_text("ready\n")
        done.append(now())

    result = box.run("cat prepared", meanwhile=prepare)
    assert result.exit_code == 0, box.errors()
    assert box.output() == "ready\n"
    assert result.began is not None and result.began >= done[0]


@pytest.mark.parametrize("kind", KINDS)
def test_the_process_starts_while_the_work_meanwhile_runs(tmp_path: Path, kind: str) -> None:
    # Under bubblewrap that is the sandbox being built beside the work.
    box = box_for(tmp_path, kind)
    token = f"hd-{uuid.uuid4().hex[:10]}"
    seen: list[str] = []

    def prepare() -> None:
        # The process is there already; on a busy machine it may not have reached its own
        # program yet, so its names are read once it has (an event, with the usual deadline).
        found = wait_until(lambda: processes_with(token), "the command's process")
        seen.extend(proc.name() for proc in found)
        seen.append("started" if (box.work / "started").exists() else "waiting")

    result = box.run(f": > started # {token}", meanwhile=prepare)
    assert result.exit_code == 0, box.errors()
    assert seen[-1] == "waiting" and (box.work / "started").exists()
    expected = {"bwrap"} if kind == "bwrap" else {"nice", "prlimit", "bash"}
    assert expected & set(seen[:-1]), seen


@pytest.mark.parametrize("kind", KINDS)
def test_the_gate_leaves_the_commands_environment_to_the_command(tmp_path: Path, kind: str) -> None:
    box = box_for(tmp_path, kind)
    startup = box.work / "startup.sh"
    startup.write_text('echo sourced >> "$PWD/sourced"\nshout() { echo shout; }\n')
    env = {"BASH_ENV": str(startup), "GREETING": "hello"}
    result = box.run('shout; echo "$GREETING"', env=env, meanwhile=lambda: None)
    assert result.exit_code == 0, box.errors()
    assert box.output() == "shout\nhello\n"
    assert (box.work / "sourced").read_text() == "sourced\n"  # once: by the command alone


@pytest.mark.parametrize("kind", KINDS)
def test_work_meanwhile_that_fails_starts_no_command(tmp_path: Path, kind: str) -> None:
    box = box_for(tmp_path, kind)
    token = f"hd-{uuid.uuid4().hex[:10]}"

    def prepare() -> None:
        assert processes_with(token)  # the process is there, held at the gate
        raise RuntimeError("could not prepare")

    with pytest.raises(RuntimeError, match="could not prepare"):
        box.run(f": > started # {token}", meanwhile=prepare)
    assert processes_with(token) == []
    assert not (box.work / "started").exists()


def test_the_gate_holds_behind_the_loopback_relay_too(tmp_path: Path) -> None:
    box = box_for(tmp_path, "bwrap")
    prepared: list[bool] = []
    result = box.run(
        "echo through",
        network="loopback",
        ports=(45321,),
        meanwhile=lambda: prepared.append(True),
    )
    assert result.exit_code == 0, box.errors()
    assert prepared == [True] and box.output() == "through\n"
