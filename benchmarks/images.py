"""What running in an OCI image costs against the host's system. Prints times and ratios;
asserts nothing.

    python benchmarks/images.py IMAGE [--runs 40] [--trials 10]

IMAGE is an image name as a task gives it (``oci:PATH:TAG``, say, a layout built as the tests
build theirs). First the image is resolved (copied and unpacked once; later starts find it by
digest), then ``/bin/true`` is started through the ``bwrap`` back-end on the host's system and
inside the image, side by side (median milliseconds per sandbox start, and the ratio); then
whole trials (a one-line agent, a one-line grading command) on the host and in the image.
Goal: a start inside an image at most 1.2x the host's, and under 100 ms at the median.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from harnessdrive.environments.oci.cache import resolve_image
from harnessdrive.environments.oci.sources import parse_image
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.runner import Isolation, get_sandbox


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("image")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--trials", type=int, default=10)
    args = parser.parse_args()
    source = parse_image(args.image, Path.cwd())
    started = time.perf_counter()
    image = resolve_image(source)
    first = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    resolve_image(source)
    again = (time.perf_counter() - started) * 1000
    print(f"image {image.digest[:19]}: resolved in {first:.0f} ms, again (cached) {again:.1f} ms")
    with tempfile.TemporaryDirectory(prefix="harnessdrive-bench-") as text:
        root = Path(text)
        work, home, tmp = root / "work", root / "home", root / "tmp"
        for folder in (work, home, tmp):
            folder.mkdir()
        env = base_environment(home, tmp)
        out = root / "out.log"
        isolation = Isolation(writable=(work, home, tmp))
        host = get_sandbox("bwrap")
        inside = host.with_image(image)

        def start(sandbox: object) -> object:
            return sandbox.run(  # type: ignore[attr-defined]
                ["/bin/true"], cwd=work, env=env, timeout=30, stdout=out, stderr=out,
                isolation=isolation,
            )  # fmt: skip

        # Alternating starts, so a busy moment of the machine falls on both alike.
        start(host)
        start(inside)
        host_ms, image_ms = [], []
        for _ in range(args.runs):
            for sandbox, samples in ((host, host_ms), (inside, image_ms)):
                began = time.perf_counter()
                start(sandbox)
                samples.append((time.perf_counter() - began) * 1000)
        h, i = statistics.median(host_ms), statistics.median(image_ms)
        print(f"sandbox start  host {h:6.1f} ms   image {i:6.1f} ms   ratio {i / h:.2f}x")
    per_trial(args.image, args.trials)


def per_trial(image: str, trials: int) -> None:
    from harnessdrive.cli.variants import resolve_variants
    from harnessdrive.running.plan import make_plan
    from harnessdrive.running.run import RunOptions, execute
    from harnessdrive.tasks.loading import load_suite
    from harnessdrive.testing.suites import TaskFiles, write_suite

    with tempfile.TemporaryDirectory(prefix="harnessdrive-bench-") as text:
        root = Path(text)
        plans = {}
        for label, extra in (("host", {}), ("image", {"environment": {"image": image}})):
            task = TaskFiles("t", files={"a.txt": "a\n"}, command="test -f b.txt", extra=extra)
            suite = load_suite(write_suite(root / label, [task]))
            variants = resolve_variants(suite, [], commands=["touch=touch b.txt"], models=[])
            plans[label] = make_plan(suite, variants, 1)
        # One trial of each in turn (each in a results folder of its own), so that load on
        # the machine falls on both alike.
        seconds: dict[str, list[float]] = {"host": [], "image": []}
        for number in range(trials + 1):
            for label, plan in plans.items():
                results = root / f"results-{label}-{number}"
                summary = execute(plan, RunOptions(results=results, sandbox="bwrap"))
                assert all(r.outcome == "pass" for r in summary.trials), "a trial failed"
                if number:  # the first of each warms the caches
                    seconds[label] += [r.seconds.total * 1000 for r in summary.trials]
        medians = {label: statistics.median(values) for label, values in seconds.items()}
        ratio = medians["image"] / medians["host"]
        print(
            f"trial          host {medians['host']:6.1f} ms   image {medians['image']:6.1f} ms   "
            f"ratio {ratio:.2f}x  (medians of {trials})"
        )


if __name__ == "__main__":
    main()
