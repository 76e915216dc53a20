"""What a process inside bubblewrap can see, write and reach."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.sandbox.bwrap import build_argv, loopback_ports
from harnessdrive.sandbox.mounts import shown_folders
from harnessdrive.sandbox.runner import Isolation
from tests.sandboxes import Box, make_box, sandbox_of


@pytest.fixture
def box(tmp_path: Path) -> Box:
    return make_box(tmp_path / "box", sandbox_of("bwrap"))


def test_the_system_is_read_only_and_the_workspace_writable(box: Box) -> None:
    result = box.run(
        "touch /usr/x 2>/dev/null && echo usr-writable; "
        "touch /etc/x 2>/dev/null && echo etc-writable; "
        "touch /x 2>/dev/null && echo root-writable; "
        "mkdir -p /new-top-level/x 2>/dev/null && echo mkdir-in-root; "
        "echo hi > in-workspace && cat in-workspace; "
        'echo home > "$HOME/h" && cat "$HOME/h"; '
        'echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t"'
    )
    assert result.exit_code == 0, box.errors()
    assert box.output() == "hi\nhome\ntmp\n"


def test_nothing_of_the_host_tmp_or_home_or_other_folders_is_visible(
    box: Box, tmp_path: Path
) -> None:
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("hidden")
    real_home = Path(os.environ.get("HOME", "/root"))
    result = box.run(
        f"ls {secret.parent} 2>&1; ls {real_home} 2>&1 | head -3; "
        "ls /tmp | wc -l; ls /work /srv /mnt /home 2>&1 | head -5; "
        "whoami; id -u"
    )
    assert result.exit_code == 0
    out = box.output()
    assert "secret.txt" not in out
    assert f"cannot access '{secret.parent}'" in out
    lines = out.splitlines()
    assert lines[-1] == str(os.getuid() or 1000)


def test_a_hidden_path_under_a_visible_folder_is_covered(tmp_path: Path) -> None:
    tools = tmp_path / "toolchain"
    (tools / "bin").mkdir(parents=True)
    (tools / "bin" / "tool").write_text("#!/bin/sh\necho tool ran\n")
    (tools / "bin" / "tool").chmod(0o755)
    suite = tools / "suites" / "mine"
    suite.mkdir(parents=True)
    (suite / "hidden_test.py").write_text("SECRET")
    sandbox = sandbox_of("bwrap", hidden=(suite,))
    box = make_box(tmp_path / "box", sandbox)
    path = f"{tools / 'bin'}:/usr/bin:/bin"
    result = box.run(f"tool; ls {tools}; ls {suite} 2>&1 | wc -l", env={"PATH": path})
    assert result.exit_code == 0, box.errors()
    # The bin folder comes without its parent: neither the suite nor anything else beside it.
    assert box.output().split() == ["tool", "ran", "bin", "1"]


def test_python_from_our_venv_runs_with_its_packages(box: Box) -> None:
    result = box.run(f"{sys.executable} -c 'import pytest, pydantic; print(\"ok\")'")
    assert result.exit_code == 0, box.errors()
    assert box.output() == "ok\n"


def test_a_read_only_path_inside_the_workspace_cannot_be_changed(box: Box) -> None:
    protected = box.work / "tests" / "test_hidden.py"
    protected.parent.mkdir()
    protected.write_text("original\n")
    box.run(
        f"echo changed > {protected}; rm -f {protected}; cat {protected}",
        readonly=(protected,),
    )
    assert protected.read_text() == "original\n"
    assert box.output() == "original\n"


def test_the_agent_cannot_see_or_signal_the_driver(box: Box) -> None:
    me = os.getpid()
    result = box.run(
        # (spelled so that the pattern does not match this very command line)
        f"kill -9 {me} 2>&1; kill -9 $PPID 2>&1; pkill -9 -f \"$(printf 'py%s' test)\"; "
        "ps -e -o pid= | wc -l"
    )
    assert result.exit_code == 0
    assert int(box.output().split()[-1]) <= 5


class _Server:
    """A TCP server on the host's 127.0.0.1 that answers ``pong`` and counts connections."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.sendall(b"pong\n")


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    yield srv
    srv.sock.close()


def _connect(port: int) -> str:
    return (
        f"{sys.executable} -c \"import socket; s = socket.create_connection(('127.0.0.1', {port}),"
        ' timeout=5); print(s.recv(10).decode().strip())"'
    )


def test_network_none_reaches_nothing(box: Box, server: _Server) -> None:
    result = box.run(_connect(server.port) + "; ip -o link 2>/dev/null | wc -l", network="none")
    assert result.exit_code == 0
    assert "pong" not in box.output()
    assert server.connections == 0


def test_network_host_reaches_the_host(box: Box, server: _Server) -> None:
    result = box.run(_connect(server.port), network="host")
    assert result.exit_code == 0, box.errors()
    assert box.output() == "pong\n"


def test_loopback_reaches_only_the_ports_it_was_given(box: Box, server: _Server) -> None:
    other = _Server()
    try:
        result = box.run(
            f"{_connect(server.port)}; {_connect(other.port)}",
            network="loopback",
            ports=(server.port,),
        )
    finally:
        other.sock.close()
    assert result.exit_code != 0
    assert box.output() == "pong\n"
    assert server.connections == 1 and other.connections == 0


def test_loopback_ports_come_from_local_urls_in_the_environment(box: Box, server: _Server) -> None:
    env = {"OPENAI_BASE_URL": f"http://127.0.0.1:{server.port}/v1"}
    assert loopback_ports(env) == {server.port}
    result = box.run(_connect(server.port), network="loopback", env=env)
    assert result.exit_code == 0, box.errors()
    assert box.output() == "pong\n"


def test_loopback_works_under_a_temp_folder_too_deep_for_a_socket_path(
    box: Box, server: _Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The relay's sockets live in a scratch folder under TMPDIR; a Unix socket's path may hold
    # at most 107 bytes.
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.setenv("TMPDIR", str(deep))
    monkeypatch.setattr(tempfile, "tempdir", None)
    result = box.run(_connect(server.port), network="loopback", ports=(server.port,))
    assert result.exit_code == 0, box.errors()
    assert box.output() == "pong\n"


def test_an_agents_own_bubblewrap_starts_inside_ours(box: Box) -> None:
    inner = "bwrap --ro-bind / / --unshare-all --dev /dev -- sh -c 'echo inner ok'"
    result = box.run(inner)
    assert result.exit_code == 0, box.errors()
    assert box.output() == "inner ok\n"


def test_the_nested_profile_lets_an_inner_bubblewrap_mount_proc(box: Box) -> None:
    inner = "bwrap --ro-bind / / --unshare-all --proc /proc --dev /dev -- sh -c 'echo inner ok'"
    # (Under our own PID namespace this fails when we run as root, and works otherwise.)
    result = box.run(inner, host_pids=True)
    assert result.exit_code == 0, box.errors()
    assert box.output() == "inner ok\n"


def test_options_come_in_the_order_bwrap_applies_them(tmp_path: Path) -> None:
    work = tmp_path / "w"
    argv = build_argv(
        Isolation(writable=(work,), readonly=(work / "ro",)),
        cwd=work,
        env={"PATH": "/usr/bin"},
    )
    text = " ".join(argv)
    assert text.index("--ro-bind /usr /usr") < text.index("--tmpfs /tmp")
    assert text.index("--tmpfs /tmp") < text.index(f"--bind {work} {work}")
    assert text.index(f"--bind {work} {work}") < text.index(f"--ro-bind {work / 'ro'}")
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--die-with-parent" in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"


def test_tool_folders_are_a_prefixs_own_folders_never_the_prefix_or_the_root(
    tmp_path: Path,
) -> None:
    for part in ("bin", "lib", "share", "results"):
        (tmp_path / "opt1" / part).mkdir(parents=True)
    (tmp_path / "plain").mkdir()
    env = {"PATH": f"{tmp_path / 'opt1' / 'bin'}:{tmp_path / 'plain'}:/:/usr/bin:relative"}
    paths = shown_folders(env)
    assert {str(tmp_path / "opt1" / p) for p in ("bin", "lib", "share")} <= set(paths)
    assert str(tmp_path / "plain") in paths
    assert str(tmp_path / "opt1") not in paths
    assert not any(p.endswith("results") for p in paths)
    assert "/" not in paths and "/usr" not in paths


def test_without_bubblewrap_auto_falls_back_and_bwrap_is_refused(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in ("/usr/bin", "/bin"):
        for entry in os.scandir(folder):
            if entry.name != "bwrap" and not (bin_dir / entry.name).exists():
                (bin_dir / entry.name).symlink_to(entry.path)
    code = (
        "from harnessdrive.sandbox.runner import get_sandbox\n"
        "from harnessdrive.errors import UserError\n"
        "print(get_sandbox('auto').name)\n"
        "try:\n    get_sandbox('bwrap')\nexcept UserError as exc:\n    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"PATH": str(bin_dir), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    lines = out.stdout.splitlines()
    assert lines[0] == "none"
    assert "bubblewrap (bwrap) is not installed" in lines[1]
