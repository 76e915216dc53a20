"""The HTML report of 100 trials with whole transcripts: its size, and how long Chromium takes
to open it from disk (load to ready) and to draw every trial's record.

The trials are copies of a recorded run's trial folders (a real-CLI run against the scripted
model, e.g. ``harnessdrive demo --harness claude,codex``), renamed so that there are 100.

    python benchmarks/report_page.py --from RESULTS_FOLDER

Goals: under 3 MB, ready in under 2 s.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.browser import Chromium, find_chromium

from harnessdrive.report.details import trial_details
from harnessdrive.report.html import render_html
from harnessdrive.report.scoreboard import build_report
from harnessdrive.store.results import TrialResult

TRIALS = 100


def _recorded(results: Path) -> list[Path]:
    return sorted(
        p.parent for p in (results / "trials").rglob("result.json") if "previous" not in p.parts
    )


def build(results: Path, into: Path) -> Path:
    sources = _recorded(results)
    if not sources:
        raise SystemExit(f"no recorded trial under {results}")
    trials: list[TrialResult] = []
    for n in range(TRIALS):
        source = sources[n % len(sources)]
        result = TrialResult.model_validate_json((source / "result.json").read_bytes())
        trial = result.model_copy(
            update={
                "trial_id": f"bench/{result.task}/{result.variant_label}/r{n + 1}",
                "repetition": n + 1,
                "attempt": 1,
            }
        )
        folder = into / "trials" / trial.trial_id
        shutil.copytree(source, folder, ignore=shutil.ignore_patterns("previous", "workspace"))
        trials.append(trial)
    started = time.perf_counter()
    report = build_report(trials, run_id="bench", suite="bench")
    report = report.model_copy(update={"details": trial_details(into, trials)})
    page = into / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    print(f"rendered {TRIALS} trials in {time.perf_counter() - started:.2f} s")
    return page


READY = (
    "new Promise(done => (function wait() {"
    " if (document.documentElement.dataset.ready) { done(performance.now()); }"
    " else { requestAnimationFrame(wait); } })())"
)
DRAW_ALL = (
    "(() => { const start = performance.now();"
    " const all = Array.from(document.querySelectorAll('details.trial'));"
    " all.forEach(d => { d.open = true; });"
    " return new Promise(done => (function wait() {"
    " if (all.every(d => d.dataset.drawn === 'yes')) { done(performance.now() - start); }"
    " else { requestAnimationFrame(wait); } })()); })()"
)


def _await(browser: Chromium, session: str, expression: str) -> float:
    reply = browser.call(
        "Runtime.evaluate",
        {"expression": expression, "awaitPromise": True, "returnByValue": True},
        session=session,
    )
    return float(reply["result"]["value"])


def measure(results: Path) -> None:
    binary = find_chromium()
    if binary is None:
        raise SystemExit("chromium is not installed")
    with tempfile.TemporaryDirectory() as work:
        page = build(results, Path(work))
        size = page.stat().st_size
        print(f"page: {size / 1e6:.2f} MB (goal < 3 MB): {'ok' if size < 3e6 else 'OVER'}")
        browser = Chromium(binary)
        try:
            visit = browser.visit(page.as_uri())
            ready = _await(browser, visit.session, READY) / 1000
            drawn = _await(browser, visit.session, DRAW_ALL) / 1000
        finally:
            browser.close()
        print(
            f"ready after {ready:.2f} s from navigation (goal < 2 s): "
            f"{'ok' if ready < 2 else 'OVER'}"
        )
        print(f"every trial's record drawn in {drawn:.2f} s more")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python benchmarks/report_page_browser.py RESULTS_FOLDER")
    measure(Path(sys.argv[1]))
