"""The HTML report as a reviewing tool, in a real headless Chromium opened from disk:
the answer first, every transcript two clicks from the scoreboard, exact filters, the
improvement curve the right way up, no label over another."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.cli.app import run_cli
from tests.browser import Chromium, Visit
from tests.conftest import ARTIFACTS

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("report-page")]
TASKS = "fewer-comparisons,amount-parsing,skiplist"


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    results = tmp_path_factory.mktemp("page") / "results"
    assert run_cli(["demo", "--task", TASKS, "--results", str(results), "--jobs", "2"]) == 0
    assert run_cli(["report", "--results", str(results), "--format", "html"]) == 0
    out = results / "report.json"
    assert run_cli(["report", "--results", str(results), "--json", "--output", str(out)]) == 0
    return results, json.loads(out.read_text())


def wait(visit: Visit, expression: str) -> Any:
    """``expression`` evaluated as a promise in the page (it resolves on the page's event)."""
    reply = visit.browser.call(
        "Runtime.evaluate",
        {"expression": expression, "awaitPromise": True, "returnByValue": True},
        session=visit.session,
    )
    if "exceptionDetails" in reply:
        raise AssertionError(f"{expression}: {reply['exceptionDetails']}")
    return reply["result"].get("value")


DRAWN = (
    "new Promise(done => { const t = document.getElementById(%s);"
    " (function check() { if (t.dataset.drawn === 'yes') { done(true); }"
    " else if (t.dataset.drawn === 'failed') { done(false); }"
    " else { requestAnimationFrame(check); } })(); })"
)


def open_page(chromium: Chromium, results: Path) -> Visit:
    visit = chromium.visit((results / "report.html").as_uri())
    assert visit.messages == []
    visit.browser.call(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False},
        session=visit.session,
    )
    return visit


def test_the_answer_is_in_the_first_screen(
    demo_page: tuple[Path, dict[str, Any]], chromium: Chromium
) -> None:
    results, report = demo_page
    visit = open_page(chromium, results)
    found = visit.evaluate(
        "(() => { const a = document.getElementById('answer'); const r = a.getBoundingClientRect();"
        " return [a.textContent, r.top, r.bottom, innerHeight]; })()"
    )
    assert found[0] == report["headline"] == report["statistics"]["answer"]
    assert found[1] >= 0 and found[2] <= found[3]


def _events_shown(trial: dict[str, Any], results: Path) -> list[str]:
    """What the drawn transcript must hold: each message's text and each tool call's name
    and main input, read from the trial's own transcript."""
    folder = results / "trials" / trial["trial_id"]
    events = json.loads((folder / "transcript.json").read_text())["events"]
    wanted = []
    for event in events:
        if event["kind"] == "message":
            wanted.append(event["text"][:200])
        elif event["kind"] == "tool_call":
            wanted.append(event["text"])
            given = event.get("data", {}).get("input") or {}
            for key in ("file_path", "path", "command"):
                if isinstance(given.get(key), str):
                    wanted.append(given[key][:200])
    return wanted


def _count(trial: dict[str, Any], results: Path) -> int:
    folder = results / "trials" / trial["trial_id"]
    return len(json.loads((folder / "transcript.json").read_text())["events"])


def test_every_transcript_is_two_clicks_from_the_scoreboard(
    demo_page: tuple[Path, dict[str, Any]], chromium: Chromium
) -> None:
    results, report = demo_page
    visit = open_page(chromium, results)
    checked = 0
    for trial in report["trials"]:
        # Click 1: the arm's name in the scoreboard keeps that arm's trials.
        visit.evaluate(
            "Array.from(document.querySelectorAll('#scoreboard a[data-arm]')).find("
            f"a => a.dataset.arm === {json.dumps(trial['variant'])}).click()"
        )
        anchor = visit.evaluate(
            "(() => { const t = Array.from(document.querySelectorAll('details.trial')).find("
            f"d => d.dataset.trial === {json.dumps(trial['trial_id'])});"
            " return t.hidden ? null : t.id; })()"
        )
        assert anchor is not None, trial["trial_id"]
        # Click 2: its summary opens it, and its whole record is drawn.
        visit.evaluate(
            f"document.getElementById({json.dumps(anchor)}).querySelector('summary').click()"
        )
        assert wait(visit, DRAWN % json.dumps(anchor)) is True
        shown = visit.evaluate(
            f"document.getElementById({json.dumps(anchor)}).querySelector('.record-view')"
            ".textContent"
        )
        wanted = _events_shown(trial, results)
        for text in wanted:
            assert text in shown, (trial["trial_id"], text)
        assert wanted and f"Transcript ({_count(trial, results)} events)" in shown
        if trial["outcome"] == "pass" and trial["lines_added"]:
            assert "diff --git" in shown
        checked += 1
    assert checked == len(report["trials"]) == 12
    visit.screenshot(ARTIFACTS / "report-page-trial.png")


def _visible(visit: Visit) -> list[str]:
    return sorted(
        visit.evaluate(
            "Array.from(document.querySelectorAll('details.trial:not([hidden])'))"
            ".map(d => d.dataset.trial)"
        )
    )


def test_the_filters_keep_exactly_the_trials_they_name(
    demo_page: tuple[Path, dict[str, Any]], chromium: Chromium
) -> None:
    results, report = demo_page
    visit = open_page(chromium, results)
    trials = report["trials"]
    for name, field in (("outcome", "outcome"), ("arm", "variant"), ("task", "task")):
        for value in sorted({t[field] for t in trials}):
            visit.evaluate(
                f"(() => {{ const s = document.getElementById('filter-{name}');"
                f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()"
            )
            expected = sorted(t["trial_id"] for t in trials if t[field] == value)
            assert _visible(visit) == expected, (name, value)
        visit.evaluate(
            f"(() => {{ const s = document.getElementById('filter-{name}'); s.value = '';"
            " s.dispatchEvent(new Event('change')); })()"
        )
    assert len(_visible(visit)) == len(trials)
    visit.evaluate(
        "(() => { const c = document.getElementById('only-failures'); c.checked = true;"
        " c.dispatchEvent(new Event('change')); })()"
    )
    assert _visible(visit) == sorted(t["trial_id"] for t in trials if t["outcome"] != "pass")
    assert any(t["outcome"] == "pass" for t in trials)


def test_the_improvement_curves_end_on_the_final_values_side(
    demo_page: tuple[Path, dict[str, Any]], chromium: Chromium
) -> None:
    results, report = demo_page
    visit = open_page(chromium, results)
    drawn = visit.evaluate(
        "(() => { const svg = document.querySelector('svg[data-chart=improvement]');"
        " const base = Number(svg.querySelector('line.axis').getAttribute('y1'));"
        " return Array.from(svg.querySelectorAll('polyline')).map(p => {"
        " const last = p.getAttribute('points').trim().split(' ').pop().split(',');"
        " return [p.querySelector('title').textContent, Number(last[1]), base]; }); })()"
    )
    ratios = {
        f"{t['variant']} on {t['task']} (r{t['repetition']})": t["metrics"]["improve.ratio"]
        for t in report["trials"]
        if "improve.ratio" in t["metrics"]
    }
    # A tampered trial improves nothing and records no ratio; its curve is drawn all the same.
    assert set(ratios) <= {label for label, _, _ in drawn}
    for label, last_y, baseline_y in drawn:
        if label not in ratios:
            continue
        ratio = ratios[label]
        if ratio > 1:  # better than the baseline: above it (SVG y grows downwards)
            assert last_y < baseline_y, label
        elif ratio < 1:
            assert last_y > baseline_y, label
        else:
            assert last_y == pytest.approx(baseline_y), label
    assert max(ratios.values()) > 1  # the reference run improves: the check above bit


def test_no_chart_label_overlaps_another(
    demo_page: tuple[Path, dict[str, Any]], chromium: Chromium
) -> None:
    results, _ = demo_page
    visit = open_page(chromium, results)
    overlaps = visit.evaluate(
        "(() => { const found = [];"
        " document.querySelectorAll('svg[data-chart]').forEach(svg => {"
        "  const boxes = Array.from(svg.querySelectorAll('text')).map(t => ["
        "   t.textContent, t.getBoundingClientRect()]);"
        "  boxes.forEach(([a, r], i) => boxes.slice(i + 1).forEach(([b, s]) => {"
        "   if (r.left < s.right - 0.5 && s.left < r.right - 0.5 && r.top < s.bottom - 0.5"
        "       && s.top < r.bottom - 0.5) {"
        "    found.push(svg.dataset.chart + ': ' + a + ' / ' + b); }"
        "  })); });"
        " return [found, document.querySelectorAll('svg[data-chart] text').length]; })()"
    )
    assert overlaps[0] == [] and overlaps[1] > 10
    # Every cost of the demo is $0: the cost chart says so instead of inventing an axis.
    assert "no cost measured" in visit.evaluate(
        "document.querySelector('svg[data-chart=pareto]').textContent"
    )
    visit.screenshot(ARTIFACTS / "report-page.png")
