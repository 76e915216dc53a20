"""The HTML page and the trial details it is drawn from: hostile text stays text, the page asks
for nothing, and 1,000 trials fit the stated budget."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path

from harnessdrive.report.details import PER_TRIAL_MIN, trial_details
from harnessdrive.report.html import render_html
from harnessdrive.report.html.page import SCRIPT
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
    assert "<img" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "\\x1b[31m" in body and "\\xff" in body and "\x1b" not in page
    assert "command: &lt;/pre&gt;" in body and "(exit 3)" in body
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
    assert "cut from" in page and 'href="trials/s/t0/v0/r1/diff.patch"' in page


def test_reviewed_passes_show_beside_passes() -> None:
    trials = [_trial("t", "a", outcome="pass"), _trial("u", "a", outcome="pass")]
    plain = render_html(build_report(trials, run_id="r", suite="s"))
    assert "<th>Accepted</th>" not in plain
    reviews = {"s/t/a/r1": "accepted", "s/u/a/r1": "rejected"}
    page = render_html(build_report(trials, run_id="r", suite="s", reviews=reviews))
    assert "<th>Accepted</th>" in page and "<td>1 of 2 reviewed</td>" in page
