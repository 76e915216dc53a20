"""How long the statistics and the HTML page of a large run take, and how big the page is.
Asserts nothing.

    python benchmarks/report_page.py [--trials 1000] [--arms 8] [--repeats 5]
    python benchmarks/report_page.py --from RESULTS   # 100 recorded trials, in Chromium

With ``--from``, the page of 100 copies of a recorded run's trials (a real-CLI run) is opened
in headless Chromium instead: its size and its time to ready (benchmarks/report_page_browser.py).

Records ``--trials`` synthetic trials (``--arms`` arms, each task repeated ``--repeats`` times,
verdicts from a seeded coin) in a scratch results folder, each with a 24 kB diff, a 14 kB test
log and a 100-event transcript; then times ``build_report`` (the scoreboard and every statistic:
Wilson intervals, pass@k, each arm against the best with its 2,000-resample bootstrap), the
reading of the drill-down details, and the page's rendering, and prints the page's size against
its stated budget (1,000 trials under 5 MB, docs/report.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.trial_results import trial_result

from harnessdrive.report.details import trial_details
from harnessdrive.report.html import render_html
from harnessdrive.report.scoreboard import build_report

BUDGET_BYTES = 5_000_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--arms", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--from", dest="recorded", type=Path, default=None)
    args = parser.parse_args()
    if args.recorded is not None:
        from benchmarks.report_page_browser import measure

        measure(args.recorded)
        return
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        source = root / "source"
        source.mkdir()
        (source / "diff.patch").write_text(("diff --git a/x b/x\n+" + "y" * 99 + "\n") * 200)
        (source / "grade-tests.log").write_text("FAILED test_x\n" * 1000)
        events = [
            {"kind": "command", "text": f"step {n}", "data": {"exit_code": 0}} for n in range(100)
        ]
        (source / "transcript.json").write_text(json.dumps({"events": events}))
        base = trial_result("t", "a", status="completed", outcome="fail")
        skill = {f"arm{a}": rng.random() for a in range(args.arms)}
        trials = []
        for i in range(args.trials):
            arm = f"arm{i % args.arms}"
            task = f"task{i // (args.arms * args.repeats)}"
            rep = (i // args.arms) % args.repeats + 1
            trial = base.model_copy(
                update={
                    "trial_id": f"s/{task}/{arm}/r{rep}",
                    "task": task,
                    "variant_label": arm,
                    "repetition": rep,
                    "outcome": "pass" if rng.random() < skill[arm] else "fail",
                }
            )
            folder = root / "trials" / trial.trial_id
            folder.mkdir(parents=True)
            for name in ("diff.patch", "grade-tests.log", "transcript.json"):
                os.link(source / name, folder / name)
            trials.append(trial)
        started = time.perf_counter()
        report = build_report(trials, run_id="r", suite="s")
        built = time.perf_counter()
        details = trial_details(root, trials)
        read = time.perf_counter()
        page = render_html(report.model_copy(update={"details": details}))
        drawn = time.perf_counter()
    size = len(page.encode())
    print(
        f"{args.trials} trials, {args.arms} arms, {len(report.tasks)} tasks "
        f"x {args.repeats} repeats"
    )
    print(f"build_report (scoreboard + statistics): {built - started:.2f} s")
    print(
        f"  {len(report.statistics.versus_best)} comparisons against the best, "
        f"{len(report.statistics.flaky)} flaky (task, arm) pairs"
    )
    print(f"trial details read:                     {read - built:.2f} s")
    print(f"page rendered:                          {drawn - read:.2f} s")
    print(
        f"page size: {size / 1e6:.2f} MB (budget {BUDGET_BYTES / 1e6:.0f} MB: "
        f"{'within' if size <= BUDGET_BYTES else 'OVER'})"
    )


if __name__ == "__main__":
    main()
