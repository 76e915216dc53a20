"""The HTML page and the trial details it is drawn from: hostile text stays text, the page asks
for nothing, and 1,000 trials fit the stated budget."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import zlib
from pathlib import Path
from typing import Any

from harnessdrive.report.details import PER_TRIAL_MIN, trial_details
from harnessdrive.report.html import render_html
from harnessdrive.report.html.page import SCRIPT
from harnessdrive.report.html.text import clean
from harnessdrive.report.scoreboard import build_report
from harnessdrive.store.results import DiffStats, RoundRecord, TrialResult
from tests.trial_results import trial_result

HOSTILE = '</pre><script>alert(1)</script><img src="http://evil.example/x">\x1b[31m\udcff'


def _trial(task: str, variant: str, rep: int = 1, **fields: object) -> TrialResult:
    return trial_result(
        task,
        variant,
        trial_id=f"s/{task}/{variant}/r{rep}",
        repetition=rep,
        status="completed",
        **fields,
    )


def _records(page: str) -> list[dict[str, Any]]:
    """Each trial's embedded record, inflated as the page's script does."""
    found = re.findall(r'<script type="application/x-deflate-base64" class="record">([^<]*)<', page)
    return [json.loads(zlib.decompress(base64.b64decode(f))) for f in found]


def events_shown(text: str) -> list[dict[str, Any]]:
    cleaned = clean(text)
    return [{"kind": "command", "text": cleaned, "data": {"exit_code": 3}}]


def test_recorded_text_cannot_add_markup_or_requests(tmp_path: Path) -> None:
    diff = DiffStats(files_changed=1, lines_added=1, paths=(HOSTILE,))
    hostile = _trial(
        "t<b>",
        "x\"'>",
        outcome="fail",
        rounds=(RoundRecord(status="completed", outcome="fail", diff=diff),),
        note=HOSTILE,
    )
    folder = tmp_path / "trials" / hostile.trial_id
    folder.mkdir(parents=True)
    (folder / "diff.patch").write_bytes(HOSTILE.encode("utf-8", "surrogateescape"))
    events = [{"kind": "command", "text": HOSTILE, "data": {"exit_code": 3}}]
    (folder / "transcript.json").write_text(json.dumps({"events": events}))
    report = build_report([hostile, _trial("t<b>", "ok", outcome="pass")], run_id="r", suite="s")
    report = report.model_copy(update={"details": trial_details(tmp_path, [hostile])})
    page = render_html(report)
    page.encode("utf-8")  # a raw byte of a recorded text never breaks the page
    body = page.split("</head>", 1)[1]
    assert body.count("<script>") == 1 and "alert(1)</script>" not in body
    assert "<img" not in body and "\x1b" not in page
    # The whole record travels deflated in a block no browser runs, and is drawn as text.
    record = _records(page)[0]
    assert record["diff"].startswith("</pre><script>alert(1)</script><img")
    assert "\\x1b[31m" in record["diff"] and record["events"] == events_shown(HOSTILE)
    assert 'data-trial="s/t&lt;b&gt;/x&quot;&#x27;&gt;/r1"' in body


def test_the_page_forbids_every_request_and_allows_only_its_own_script() -> None:
    page = render_html(build_report([_trial("t", "a", outcome="pass")], run_id="r", suite="s"))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    assert policy.group(1).startswith("default-src 'none';")
    assert f"script-src 'sha256-{digest}'" in policy.group(1)
    assert f"<script>{SCRIPT}</script>" in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)


def test_a_thousand_trials_fit_the_budget_and_say_what_was_cut(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    big_diff = "diff --git a/x b/x\n" + "+" + "y" * 99 + "\n"
    (source / "diff.patch").write_text(big_diff * 200)  # 24 kB
    (source / "grade-tests.log").write_text("FAILED test_x\n" * 1000 + "1 failed\n")
    events = [{"kind": "message", "text": f"step {n} " + "z" * 200} for n in range(100)]
    (source / "transcript.json").write_text(json.dumps({"events": events}))
    base = _trial("t", "v", outcome="pass")
    trials = []
    for i in range(1000):
        task, variant = f"t{i % 50}", f"v{i // 50}"
        trial = base.model_copy(
            update={
                "trial_id": f"s/{task}/{variant}/r1",
                "task": task,
                "variant_label": variant,
                "outcome": "pass" if i % 3 else "fail",
            }
        )
        folder = tmp_path / "trials" / trial.trial_id
        folder.mkdir(parents=True)
        for name in ("diff.patch", "grade-tests.log", "transcript.json"):
            os.link(source / name, folder / name)  # the same bytes, without writing them again
        trials.append(trial)
    details = trial_details(tmp_path, trials)
    report = build_report(trials, run_id="r", suite="s").model_copy(update={"details": details})
    page = render_html(report)
    assert len(page.encode()) < 5_000_000, len(page)
    assert page.count('class="trial"') == 1000
    first = details[0]
    assert first.diff is not None and first.diff.cut and first.diff.chars == 24_000
    assert len(first.diff.text) >= PER_TRIAL_MIN // 2
    assert first.tests is not None and first.tests.text.endswith("1 failed\n")
    assert any("more events" in line for line in first.transcript) and first.events == 100
    assert 'href="trials/s/t0/v0/r1/"' in page
    # The page's own record of a trial is whole: nothing cut, the script pages through it.
    whole = _records(page)[0]
    assert whole["diff"] == big_diff * 200 and len(whole["events"]) == 100


def test_reviewed_passes_show_beside_passes() -> None:
    trials = [_trial("t", "a", outcome="pass"), _trial("u", "a", outcome="pass")]
    plain = render_html(build_report(trials, run_id="r", suite="s"))
    assert "<th>Accepted</th>" not in plain
    reviews = {"s/t/a/r1": "accepted", "s/u/a/r1": "rejected"}
    page = render_html(build_report(trials, run_id="r", suite="s", reviews=reviews))
    assert "<th>Accepted</th>" in page and "<td>1 of 2 reviewed</td>" in page


def test_per_rule_scores_and_improvement_show_when_trials_record_them() -> None:
    plain = render_html(build_report([_trial("t", "a", outcome="pass")], run_id="r", suite="s"))
    assert 'id="rules"' not in plain and 'id="improvement"' not in plain
    metrics = [
        {
            "rule.dst.passed": 3.0,
            "rule.dst.cases": 4.0,
            "rule.base.passed": 4.0,
            "rule.base.cases": 4.0,
            "improve.log_ratio": 0.7,
            "improve.curve.0": 10.0,
            "improve.curve.1": 6.0,
            "improve.curve.2": 5.0,
        },
        {
            "rule.dst.passed": 1.0,
            "rule.dst.cases": 4.0,
            "rule.base.passed": 4.0,
            "rule.base.cases": 4.0,
        },
    ]
    trials = [
        _trial("t", "a", outcome="pass", metrics=metrics[0]),
        _trial("t", "b", outcome="fail", metrics=metrics[1]),
    ]
    report = build_report(trials, run_id="r", suite="s")
    rules = {
        a.variant: [(r.rule, r.passed, r.cases) for r in a.rules] for a in report.statistics.arms
    }
    assert rules == {"a": [("base", 4, 4), ("dst", 3, 4)], "b": [("base", 4, 4), ("dst", 1, 4)]}
    page = render_html(report)
    assert 'data-chart="rules"' in page and "<td>3 of 4</td>" in page
    assert 'data-chart="improvement"' in page and page.count('class="curve"') == 1
    assert "x2.01" in page  # exp(0.7), the one task's ratio
