"""The trials section: exact filters, sorting, and one anchored, collapsible entry per trial
whose whole record (prompt, transcript, diff, test output) is embedded deflated and base64
encoded, to be drawn by the page's script when the entry is opened."""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Sequence
from typing import Any

from harnessdrive.report.details import Excerpt, TrialDetail
from harnessdrive.report.html.text import attr, clean, esc
from harnessdrive.report.scoreboard import Report, TrialRow

FAILING = ("fail", "tampered", "timeout", "error")


def trial_anchor(index: int) -> str:
    """The fragment of the ``index``-th trial of the report (its order in ``report.trials``)."""
    return f"trial-{index}"


def anchors(report: Report) -> dict[str, str]:
    return {t.trial_id: trial_anchor(i) for i, t in enumerate(report.trials)}


def _options(name: str, label: str, values: Sequence[str]) -> str:
    choices = "".join(f'<option value="{attr(v)}">{esc(v)}</option>' for v in values)
    return (
        f'<label>{esc(label)} <select id="{name}" data-filter="{name[7:]}">'
        f'<option value="">all</option>{choices}</select></label> '
    )


def trials(report: Report, base: str) -> str:
    details = {d.trial_id: d for d in report.details}
    items = "".join(
        _trial(i, t, details.get(t.trial_id), base) for i, t in enumerate(report.trials)
    )
    outcomes = sorted({t.outcome for t in report.trials})
    arms = list(dict.fromkeys(t.variant for t in report.trials))
    tasks = sorted({t.task for t in report.trials})
    controls = (
        '<p class="controls">'
        + _options("filter-outcome", "Outcome", outcomes)
        + _options("filter-arm", "Arm", arms)
        + _options("filter-task", "Task", tasks)
        + '<label><input type="checkbox" id="only-failures"> failures only</label> '
        + '<label><input type="checkbox" id="only-unreviewed"> unreviewed passes only</label> '
        + '<label>Sort <select id="sort"><option value="order">as run</option>'
        '<option value="task">task</option><option value="arm">arm</option>'
        '<option value="outcome">outcome</option><option value="cost">cost</option>'
        '<option value="seconds">time</option><option value="tokens">tokens</option>'
        "</select></label> "
        '<button id="expand" type="button">Expand all</button> '
        f'<span id="shown">{len(report.trials)} trials</span></p>'
    )
    return (
        '<section id="trials"><h2>Trials</h2>'
        "<p>Open a trial to read its prompt, its whole transcript (every message and tool call "
        "with its input and result), its diff and its test output.</p>"
        + controls
        + f'<div id="trial-list">{items}</div></section>'
    )


def _trial(index: int, trial: TrialRow, detail: TrialDetail | None, base: str) -> str:
    cost = "-" if trial.cost_usd is None else f"${trial.cost_usd:.4f}"
    record = detail.record if detail is not None else None
    review = record.review if record is not None else {}
    decision = review.get("decision", "")
    summary = (
        f'<span class="cell {_outcome_class(trial.outcome)}">{esc(trial.outcome)}</span> '
        f"{esc(trial.task)} · {esc(trial.variant)} · r{trial.repetition} · {esc(trial.status)}"
        f" · {cost} · {trial.tokens} tokens · {trial.agent_seconds:.1f}s"
        + (f' · <span class="review">{esc(decision)}</span>' if decision else "")
    )
    facts = [
        f'<li>Trial: <code>{esc(trial.trial_id)}</code> <a href="#{trial_anchor(index)}">'
        "link</a></li>",
        f"<li>Hidden tests: {_count(trial.hidden_passed, trial.hidden_total)}; visible: "
        f"{_count(trial.visible_passed, trial.visible_total)}</li>",
        f"<li>Changed {trial.files_changed} file(s), +{trial.lines_added} -{trial.lines_deleted}"
        "</li>",
        f"<li>Cost: {cost} ({esc(trial.cost_source)}), charged ${trial.charged_usd:.4f}</li>",
    ]
    if decision:
        note = review.get("note", "")
        facts.append(f"<li>Review: {esc(decision)}" + (f": {esc(note)}" if note else "") + "</li>")
    if trial.error:
        facts.append(f"<li>Error: {esc(trial.error)}</li>")
    facts.extend(
        f'<li class="finding">{esc(f.code)} {esc(f.path or "")}: {esc(f.detail)}</li>'
        for f in trial.findings
    )
    facts.extend(
        f'<li class="claim">False claim ({esc(c.kind)}): {esc(c.text)}</li>'
        for c in trial.claims
        if not c.holds
    )
    body = "<ul>" + "".join(facts) + "</ul>"
    if detail is not None:
        body += _files(detail, base)
    if record is not None:
        payload = json.dumps(
            _cleaned({**record.to_json(), "passed": trial.outcome == "pass"}),
            ensure_ascii=False,
            separators=(",", ":"),
        )
        packed = base64.b64encode(zlib.compress(payload.encode("utf-8"), 9)).decode()
        body += (
            f'<script type="application/x-deflate-base64" class="record">{packed}</script>'
            '<div class="record-view"></div>'
        )
    elif detail is not None:
        body += _excerpts(detail, base)
    reviewed = "yes" if decision else "no"
    return (
        f'<details class="trial" id="{trial_anchor(index)}" data-trial="{attr(trial.trial_id)}" '
        f'data-outcome="{attr(trial.outcome)}" data-arm="{attr(trial.variant)}" '
        f'data-task="{attr(trial.task)}" data-reviewed="{reviewed}" data-order="{index}" '
        f'data-cost="{trial.cost_usd or 0}" data-seconds="{trial.agent_seconds}" '
        f'data-tokens="{trial.tokens}"><summary>{summary}</summary>{body}</details>'
    )


def _cleaned(value: Any) -> Any:
    """``value`` with every string (keys too) as valid Unicode without control characters."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(k): _cleaned(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_cleaned(v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return clean(value)


def _count(passed: int | None, total: int | None) -> str:
    return "-" if passed is None or total is None else f"{passed} of {total}"


def _outcome_class(outcome: str) -> str:
    return {"pass": "pass", "fail": "fail", "tampered": "tampered"}.get(outcome, "none")


def _files(detail: TrialDetail, base: str) -> str:
    folder = f"{base}{detail.folder}"
    parts = [f'<p>Files: <a href="{attr(folder)}/">{esc(detail.folder)}</a></p>']
    if detail.cost:
        parts.append(
            "<h4>Cost by model</h4><ul>"
            + "".join(f"<li>{esc(c)}</li>" for c in detail.cost)
            + "</ul>"
        )
    return "".join(parts)


def _excerpts(detail: TrialDetail, base: str) -> str:
    """The cut excerpts, for a report whose details carry no whole record."""
    folder = f"{base}{detail.folder}"
    parts = []
    for title, excerpt in (("Diff", detail.diff), ("Test output (tail)", detail.tests)):
        if excerpt is not None:
            parts.append(_excerpt(title, excerpt, folder))
    if detail.transcript:
        parts.append(
            f"<h4>Transcript ({detail.events} events)</h4><pre>"
            + esc("\n".join(detail.transcript))
            + "</pre>"
        )
    return "".join(parts)


def _excerpt(title: str, excerpt: Excerpt, folder: str) -> str:
    link = f'<a href="{attr(folder)}/{attr(excerpt.file)}">{esc(excerpt.file)}</a>'
    note = (
        f" (cut from {excerpt.chars} bytes: the whole text is in {link})"
        if excerpt.cut
        else f" ({link})"
    )
    return f"<h4>{esc(title)}{note}</h4><pre>{esc(excerpt.text)}</pre>"
