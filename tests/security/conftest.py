"""Run every attack once per sandbox back-end, in one ``harnessdrive run``, and keep the evidence.

The run is a subprocess with its own HOME (the "real HOME" the attackers aim at), fake
credentials and session variables in its environment, a PATH that starts with "." and an empty
entry, ``--network none`` and a TCP server on the host's 127.0.0.1 that counts who reaches it.
Around the run we take fingerprints of everything an attacker must not change.
"""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
import tomli_w

from harnessdrive.store.results import TrialResult
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.testing.suites import TaskFiles, write_task
from tests.conftest import ADD_BUGGY, ADD_FIXED, ADD_HIDDEN_TEST, ADD_VISIBLE_TEST
from tests.images import image_cache, python_image
from tests.sandboxes import require_bwrap
from tests.security.attacks import ATTACKS, Attack
from tests.trial_results import trial_folder

HONEST = "printf 'def add(a, b):\\n    return a + b\\n' > calc.py\n"
FAKE_SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-FAKE-SECRET-7f3a",
    "OPENAI_API_KEY": "sk-FAKE-SECRET-91c2",
    "CLAUDECODE": "1",
    "CLAUDE_CODE_SSE_PORT": "45454",
    "CODEX_SANDBOX": "seatbelt",
    "SSH_AUTH_SOCK": "/tmp/fake-agent.sock",
}


class CountingServer:
    """Accepts TCP connections on 127.0.0.1 and counts them."""

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
            conn.close()


def fingerprint(root: Path) -> dict[str, str]:
    """Every file under ``root`` (links as their target) with a hash of its content."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@dataclass
class AttackRun:
    kind: str
    base: Path
    token: str
    user_repo: Path
    real_home: Path
    results: Path
    suite: Path
    server: CountingServer
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    before: dict[str, dict[str, str]]
    after: dict[str, dict[str, str]]
    attacks: tuple[Attack, ...]
    daemon_pids: set[int] = field(default_factory=set)

    def result(self, variant: str) -> TrialResult:
        path = trial_folder(self.results, f"suite/attack/{variant}/r1") / "result.json"
        return TrialResult.model_validate_json(path.read_text())

    def trial_file(self, variant: str, name: str) -> Path:
        return trial_folder(self.results, f"suite/attack/{variant}/r1") / name


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(f"@@{key}@@", value)
    return text


ATTACK_LIMITS = {"processes": 64, "file_size_mb": 8, "disk_mb": 48}


def _run_attacks(
    base: Path,
    kind: str,
    candidates: tuple[Attack, ...] = ATTACKS,
    limits: dict[str, int] = ATTACK_LIMITS,
    image: str | None = None,
) -> AttackRun:
    token = uuid.uuid4().hex[:12]
    hidden_sentinel = f"HIDDEN-SENTINEL-{token}"
    solution_sentinel = f"SOLUTION-SENTINEL-{token}"
    user_repo = base / "user-repo"
    repo = RepoBuilder(user_repo)
    repo.commit(
        "start",
        {"calc.py": ADD_BUGGY, "tests/test_visible.py": ADD_VISIBLE_TEST, "README.md": "calc\n"},
    )
    repo.checkout()
    repo.close()
    real_home = base / "real-home"
    (real_home / ".ssh").mkdir(parents=True)
    (real_home / ".ssh" / "id_rsa").write_text("FAKE PRIVATE KEY\n")
    (real_home / ".bashrc").write_text("# the user's shell\n")
    results = base / "results"
    results.mkdir()
    (results / "canary.txt").write_text("recorded before the attacks\n")
    server = CountingServer()
    canary = base / "git-canary"
    values = {
        "USER_REPO": str(user_repo),
        "REAL_HOME": str(real_home),
        "RESULTS": str(results),
        "PORT": str(server.port),
        "TOKEN": token,
        "CANARY": str(canary),
        "HIDDEN_SENTINEL": hidden_sentinel,
        "SOLUTION_SENTINEL": solution_sentinel,
    }
    attacks = tuple(a for a in candidates if kind == "bwrap" or a.without_sandbox)
    suite = base / "suite"
    write_task(
        suite / "tasks",
        TaskFiles(
            "attack",
            hidden={"tests/test_hidden.py": f"# {hidden_sentinel}\n{ADD_HIDDEN_TEST}"},
            solution={"calc.py": f"# {solution_sentinel}\n{ADD_FIXED}"},
            protected=["tests/**"],
            # A bare `python` is looked up on PATH: a planted one must never be found.
            command="PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -q -p no:cacheprovider",
            prompt="Fix the add function in calc.py so that the tests pass.",
            agent_timeout=40,
            extra={
                "repo": {"path": str(user_repo)},
                "limits": limits,
                # Inside an OCI root (a Debian image built here) every attack must fail alike.
                **({"environment": {"image": image}} if image else {}),
            },
        ),
    )
    variants = [{"harness": "command", "name": "honest", "options": {"template": HONEST}}]
    variants += [
        {"harness": "command", "name": a.name, "options": {"template": _fill(a.template, values)}}
        for a in attacks
    ]
    (suite / "suite.toml").write_text(
        tomli_w.dumps({"name": "suite", "tasks": ["tasks/*"], "variants": variants})
    )
    venv_bin = str(Path(sys.executable).parent)
    env = {
        "PATH": f".::{venv_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(real_home),
        "LANG": "C.UTF-8",
        "TMPDIR": str(base / "systmp"),
        # harnessdrive's own register of results folders; the watched HOME is the agent's target.
        "XDG_STATE_HOME": str(base / "state"),
        **FAKE_SECRETS,
    }
    if image:
        env["HARNESSDRIVE_IMAGE_CACHE"] = str(image_cache() / "unpacked")
    (base / "systmp").mkdir()
    watched = {"user-repo": user_repo, "real-home": real_home, "suite": suite}
    before = {name: fingerprint(path) for name, path in watched.items()}
    before["results-canary"] = fingerprint(results)
    command = [
        sys.executable,
        "-m",
        "harnessdrive.cli",
        "run",
        str(suite),
        "--results",
        str(results),
        "--jobs",
        "2",
        "--network",
        "none",
        "--sandbox",
        kind,
    ]
    daemon_pids: set[int] = set()
    started = time.monotonic()
    driver = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # Note the host pids of the daemons while they live, to check them after the run.
    watcher = threading.Thread(target=_watch_daemons, args=(driver, token, daemon_pids))
    watcher.start()
    stdout, stderr = driver.communicate(timeout=600)
    watcher.join()
    seconds = time.monotonic() - started
    after = {name: fingerprint(path) for name, path in watched.items()}
    after["results-canary"] = {"canary.txt": fingerprint(results)["canary.txt"]}
    return AttackRun(
        kind=kind,
        base=base,
        token=token,
        user_repo=user_repo,
        real_home=real_home,
        results=results,
        suite=suite,
        server=server,
        returncode=driver.returncode,
        stdout=stdout,
        stderr=stderr,
        seconds=seconds,
        before=before,
        after=after,
        attacks=attacks,
        daemon_pids=daemon_pids,
    )


def _watch_daemons(driver: subprocess.Popen[str], token: str, pids: set[int]) -> None:
    while driver.poll() is None:
        for proc in psutil.process_iter(["cmdline"]):
            if token in " ".join(proc.info["cmdline"] or []):
                pids.add(proc.pid)
        time.sleep(0.1)


@pytest.fixture(scope="session", params=["bwrap", "none", "bwrap-image"])
def attack_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AttackRun]:
    kind = request.param
    image = None
    if kind.startswith("bwrap"):
        require_bwrap()
    if kind == "bwrap-image":
        image, kind = python_image(), "bwrap"
    run = _run_attacks(tmp_path_factory.mktemp(f"attacks-{request.param}"), kind, image=image)
    yield run
    run.server.sock.close()
