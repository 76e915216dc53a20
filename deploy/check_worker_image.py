"""Build the worker image of ``deploy/Containerfile`` and try it before a cluster gets it.

    python deploy/check_worker_image.py [--image NAME | --base IMAGE] [--clis "claude codex"]
        [--builder buildah|podman] [--keep]

Without ``--image`` it builds the Containerfile from this checkout (``--base`` replaces its
``FROM``; a TLS authority named by ``PIP_CERT`` or ``NODE_EXTRA_CA_CERTS`` here is lent to the
build). Then it runs the image's own programs under harnessdrive's bubblewrap sandbox, with the
image's root as the system and its ``User``, as a worker node would run them:

1. ``harnessdrive --version`` matches this checkout's;
2. the node check a Ray driver runs on each node (sandbox, version, CLI, disk, memory), for
   every CLI installed in the image: each must say it can run trials;
3. ``harnessdrive demo``: bubblewrap starts inside the image (a sandbox inside a sandbox here),
   the reference passes every task and the tamperer is caught;
4. ``harnessdrive demo --harness claude`` where Claude Code is installed: a real CLI of the
   image, on Node from the image, against the scripted model on 127.0.0.1.

Prints one line per check and exits 1 when any fails. A pod's own limits (seccomp, AppArmor,
a masked /proc) are not what runs here: docs/scale.md says what a pod must allow.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", help="an image already built (in the builder's storage)")
    parser.add_argument("--base", help="the FROM image (default: the Containerfile's)")
    parser.add_argument("--clis", default="", help="CLIs to install and check (default: all)")
    parser.add_argument("--builder", default="buildah" if shutil.which("buildah") else "podman")
    parser.add_argument("--keep", action="store_true", help="keep the built image and cache")
    args = parser.parse_args()
    if shutil.which(args.builder) is None or shutil.which("bwrap") is None:
        print(f"error: needs {args.builder} and bubblewrap (bwrap) installed", file=sys.stderr)
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
        root = unpack(args.builder, image, scratch)
        return 0 if all_checks(root, scratch, harnesses) else 1
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


def all_checks(root: ImageRoot, scratch: Path, names: list[str]) -> bool:
    installed = run_inside(root, scratch, ["harnessdrive", "--version"])
    ok = report("harnessdrive version", installed, want=__version__)
    checked = run_inside(root, scratch, ["python3", "-c", NODE_CHECK, __version__, "bwrap", *names])
    ok &= report(f"node check for {len(names)} CLIs", checked)
    demo = run_inside(root, scratch, ["harnessdrive", "demo"], timeout=600)
    ok &= report("demo under bubblewrap inside the image", demo, want="tampered")
    if "claude" in names:
        real = run_inside(root, scratch, ["harnessdrive", "demo", "--harness", "claude"], 900)
        ok &= report("demo with the image's claude", real, want="claude")
    return ok


def run_inside(
    root: ImageRoot, scratch: Path, argv: list[str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    home = Path(tempfile.mkdtemp(dir=scratch, prefix="home-"))
    out, err = home / ".out", home / ".err"
    env = {"HOME": str(home), "TMPDIR": str(home), "LANG": "C.UTF-8", "COLUMNS": "120"}
    result = (
        get_sandbox("bwrap")
        .with_image(root)
        .run(
            argv,
            cwd=home,
            env=root.environment(env),
            timeout=timeout,
            stdout=out,
            stderr=err,
            isolation=Isolation(writable=(home,), network="loopback"),
        )
    )
    text = out.read_text(errors="replace"), err.read_text(errors="replace")
    return subprocess.CompletedProcess(argv, 0 if result.ok else 1, *text)


def report(what: str, done: subprocess.CompletedProcess[str], want: str = "") -> bool:
    ok = done.returncode == 0 and want in done.stdout
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        for line in (done.stdout + done.stderr).strip().splitlines()[-15:]:
            print(f"     {line}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
