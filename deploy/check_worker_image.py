"""Build the worker image of ``deploy/Containerfile`` and try it before a cluster gets it.

    python deploy/check_worker_image.py [--image NAME | --base IMAGE] [--clis "claude codex"]
        [--builder buildah|podman] [--podman [--podman-option=OPTION ...]] [--keep]

Without ``--image`` it builds the Containerfile from this checkout (``--base`` replaces its
``FROM``; a TLS authority named by ``PIP_CERT`` or ``NODE_EXTRA_CA_CERTS`` here is lent to the
build). Then it runs the image's own programs as the image's user, as a worker node would run
them: under harnessdrive's bubblewrap sandbox with the image's root as the system, or with
``--podman`` in podman containers with the pod settings of docs/scale.md (``--podman-option``
adds what the host's podman needs, such as ``--podman-option=--runtime=runc``). It reports
whether bubblewrap starts in a container as a runtime makes it by default, then checks, with
what a pod must allow bubblewrap (an unmasked ``/proc``, and under podman no seccomp profile):

1. bubblewrap starts inside the image;
2. ``harnessdrive --version`` matches this checkout's;
3. the node check a Ray driver runs on each node (sandbox, version, CLI, disk, memory), for
   every CLI installed in the image: each must say it can run trials;
4. ``harnessdrive demo --sandbox bwrap``: the reference passes every task and the tamperer is
   caught, each trial in a sandbox inside the image's;
5. ``harnessdrive demo --harness claude`` where Claude Code is installed: a real CLI of the
   image, on Node from the image, against the scripted model on 127.0.0.1.

Prints one line per check and exits 1 when any of 1 to 5 fails.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Protocol

from harnessdrive import __version__
from harnessdrive.environments.oci.cache import ImageCache
from harnessdrive.environments.oci.sources import parse_image
from harnessdrive.harnesses.cli.install import PINS
from harnessdrive.sandbox.image_root import ImageRoot
from harnessdrive.sandbox.runner import Isolation, get_sandbox

CHECKOUT = Path(__file__).resolve().parent.parent
CONTAINERFILE = CHECKOUT / "deploy" / "Containerfile"
TAG = "localhost/harnessdrive-worker:check"
NODE_CHECK = """
import sys
from harnessdrive import __version__
from harnessdrive.executors.ray_nodes import check_node
from harnessdrive.harnesses.registry import get_harness
from harnessdrive.trial.job import WorkerSettings

driver_version, sandbox, *names = sys.argv[1:]
bad = 0
for name in names:
    report = check_node("image", get_harness(name), WorkerSettings(sandbox=sandbox), driver_version)
    print(f"{name} {report.harness_version or '-'}: {report.problem or 'can run'}")
    bad += report.problem is not None
sys.exit(1 if bad else 0)
"""
# What harnessdrive's sandbox asks of bubblewrap at the least: every namespace, a new /proc and
# a hostname of its own.
BWRAP_STARTS = ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "--proc", "/proc"]
BWRAP_STARTS += ["--hostname", "sandbox", "--", "true"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", help="an image already built (in the builder's storage)")
    parser.add_argument("--base", help="the FROM image (default: the Containerfile's)")
    parser.add_argument("--clis", default="", help="CLIs to install and check (default: all)")
    parser.add_argument("--builder", default="buildah" if shutil.which("buildah") else "podman")
    parser.add_argument(
        "--podman",
        action="store_true",
        help="run the checks in podman containers with a pod's settings, not under bubblewrap",
    )
    parser.add_argument(
        "--podman-option",
        action="append",
        default=[],
        metavar="OPTION",
        help="one more option for `podman run` (repeatable), as this host needs",
    )
    parser.add_argument("--keep", action="store_true", help="keep the built image and cache")
    args = parser.parse_args()
    needed = [args.builder, "podman" if args.podman else "bwrap"]
    missing = [tool for tool in needed if shutil.which(tool) is None]
    if missing:
        print(f"error: needs {' and '.join(missing)} installed", file=sys.stderr)
        return 2
    unknown = [n for n in args.clis.split() if n not in PINS]
    if unknown:
        print(f"error: --clis: not a pinned CLI: {' '.join(unknown)}", file=sys.stderr)
        return 2
    harnesses = [PINS[n].harness for n in args.clis.split() or PINS]
    scratch = Path(tempfile.mkdtemp(prefix="hd-image-check-"))
    image = args.image or TAG
    try:
        if not args.image:
            build(args.builder, args.base, args.clis)
        if args.podman:
            runner: Runner = InPodman(image, tuple(args.podman_option))
        else:
            runner = UnderBubblewrap(unpack(args.builder, image, scratch), scratch)
        return 0 if all_checks(runner, harnesses) else 1
    except subprocess.CalledProcessError as exc:
        print(f"error: {shlex.join(exc.cmd)} failed (exit {exc.returncode})", file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
            if not args.image:
                subprocess.run([args.builder, "rmi", TAG], capture_output=True, check=False)


def build(builder: str, base: str | None, clis: str) -> None:
    argv = [builder, "build" if builder.endswith("podman") else "bud", "--layers"]
    argv += ["-f", str(CONTAINERFILE), "-t", TAG, "--build-arg", f"CLIS={clis}"]
    if base:
        argv += ["--build-arg", f"BASE={base}"]
    for name in ("PIP_CERT", "NODE_EXTRA_CA_CERTS"):
        if os.environ.get(name) and Path(os.environ[name]).is_file():
            inside = f"/run/{name.lower()}.pem"
            argv += ["-v", f"{os.environ[name]}:{inside}:ro", "--build-arg", f"{name}={inside}"]
    print(f"building: {shlex.join(argv)}", flush=True)
    subprocess.run([*argv, str(CHECKOUT)], check=True, stdout=subprocess.DEVNULL)


def unpack(builder: str, image: str, scratch: Path) -> ImageRoot:
    """The image's root as harnessdrive's sandbox shows it (its own cache of unpacked roots)."""
    layout = scratch / "layout"
    subprocess.run([builder, "push", "--quiet", image, f"oci:{layout}:worker"], check=True)
    return ImageCache(scratch / "cache").resolve(parse_image(f"oci:{layout}:worker", scratch))


class Runner(Protocol):
    def __call__(
        self, argv: list[str], timeout: float = 120, *, loosened: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` as the image's user in the image; ``loosened``: with what a pod must
        allow bubblewrap (docs/scale.md), else as a default container has it."""
        ...


def all_checks(run: Runner, names: list[str]) -> bool:
    default = run(BWRAP_STARTS, loosened=False)
    why = (default.stderr.strip().splitlines() or ["no message"])[-1]
    print(f"note bubblewrap inside a default container: {why if default.returncode else 'starts'}")
    ok = report("bubblewrap inside, with a pod's settings", run(BWRAP_STARTS))
    ok &= report("harnessdrive version", run(["harnessdrive", "--version"]), want=__version__)
    checked = run(["python3", "-c", NODE_CHECK, __version__, "bwrap", *names])
    ok &= report(f"node check for {len(names)} CLIs", checked)
    for line in checked.stdout.splitlines() if checked.returncode == 0 else ():
        print(f"     {line}")
    demo = run(["harnessdrive", "demo", "--sandbox", "bwrap"], timeout=600)
    ok &= report("demo under bubblewrap inside the image", demo, want="tampered")
    if "claude" in names:
        real = run(["harnessdrive", "demo", "--sandbox", "bwrap", "--harness", "claude"], 900)
        ok &= report("demo with the image's claude", real, want="claude")
    return ok


class UnderBubblewrap:
    """harnessdrive's own sandbox with the image's root as the system. Loosened, it shows the
    host's /proc, as a pod with ``procMount: Unmasked`` has it; else its own, partly covered,
    as a container runtime masks it."""

    def __init__(self, root: ImageRoot, scratch: Path) -> None:
        self.root, self.scratch = root, scratch

    def __call__(
        self, argv: list[str], timeout: float = 120, *, loosened: bool = True
    ) -> subprocess.CompletedProcess[str]:
        home = Path(tempfile.mkdtemp(dir=self.scratch, prefix="home-"))
        out, err = home / ".out", home / ".err"
        env = {"HOME": str(home), "TMPDIR": str(home), "LANG": "C.UTF-8", "COLUMNS": "120"}
        isolation = Isolation(writable=(home,), network="loopback", host_pids=loosened)
        result = (
            get_sandbox("bwrap")
            .with_image(self.root)
            .run(
                argv,
                cwd=home,
                env=self.root.environment(env),
                timeout=timeout,
                stdout=out,
                stderr=err,
                isolation=isolation,
            )
        )
        text = out.read_text(errors="replace"), err.read_text(errors="replace")
        return subprocess.CompletedProcess(argv, 0 if result.ok else 1, *text)


# What the pod example in docs/scale.md sets, in podman's words. Loosened adds what bubblewrap
# needs: the runtime's default seccomp profile refuses sethostname and namespace mounts to a
# process without CAP_SYS_ADMIN, and a masked /proc refuses a new one.
POD = ("--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--network", "host")
LOOSENED = ("--security-opt", "seccomp=unconfined", "--security-opt", "unmask=ALL")


class InPodman:
    """A podman container of the image, as a pod runs it."""

    def __init__(self, image: str, extra: tuple[str, ...]) -> None:
        self.image, self.extra = image, extra

    def __call__(
        self, argv: list[str], timeout: float = 120, *, loosened: bool = True
    ) -> subprocess.CompletedProcess[str]:
        options = [*POD, *(LOOSENED if loosened else ()), *self.extra]
        command = ["podman", "run", "--rm", *options, "-e", "COLUMNS=120", self.image, *argv]
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(argv, 1, "", f"timed out after {timeout:.0f} s")


def report(what: str, done: subprocess.CompletedProcess[str], want: str = "") -> bool:
    ok = done.returncode == 0 and want in done.stdout
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        for line in (done.stdout + done.stderr).strip().splitlines()[-15:]:
            print(f"     {line}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
