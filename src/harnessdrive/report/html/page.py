"""The report as one self-contained HTML file: inline style, inline SVG, one small inline
script, and a Content-Security-Policy that forbids every request (no server, no CDN, nothing
fetched), so the page opens from ``file://`` and a recorded text cannot load anything."""

from __future__ import annotations

import base64
import hashlib
import re

from harnessdrive.report.html import matrix, sections, trial_view
from harnessdrive.report.html.scripts import SCRIPT
from harnessdrive.report.html.text import esc
from harnessdrive.report.scoreboard import Report

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1200px}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ddd;padding:2px 6px;
text-align:right}th{background:#f4f4f4}td:first-child,td:nth-child(2){text-align:left}
.cell{padding:0 4px;border-radius:3px}.pass{background:#d4f4d4}.fail{background:#f8d4d4}
.mixed{background:#fbeec0}.tampered{background:#e8c8f0;font-weight:bold}.none{background:#eee}
.chart{display:block;margin:.6em 0;font-size:11px}.axis{stroke:#888}.whisker{stroke:#222;
stroke-width:1.5}.frontier{fill:none;stroke:#222;stroke-dasharray:4 3}.link{stroke:#999;
stroke-dasharray:2 2}.curve{fill:none;stroke-width:1.5}
pre{background:#f7f7f7;padding:.5em;overflow:auto;max-height:32em;white-space:pre-wrap;
margin:.2em 0}details.trial{border-bottom:1px solid #eee;padding:2px 0}.finding{color:#80a}
.mixed-note{color:#a60}.chart{max-width:100%;height:auto}.empty{fill:#888;font-size:14px}
nav.toc a{margin-right:.8em}.controls label{margin-right:.6em}.step{margin:.3em 0 .3em 1em;
border-left:3px solid #9bd;padding-left:.5em}.step.result{border-color:#ccc}.msg{margin:.4em 0}
.msg pre{background:#eef4ff}.arg{margin:.1em 0}.label{color:#666;font-size:.9em}
.diff .da{color:#060;background:#e6ffe6}.diff .dd{color:#900;background:#ffe6e6}
.diff .dc{color:#06c}.diff .dh{font-weight:bold}.pre.failing,pre.failing{background:#fff0f0}
.planted{background:#fff8d8;padding:.3em}.ok{color:#060}.legend .key{margin-right:1em}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
.review{font-weight:bold}.claim{color:#a00}#answer{font-size:1.5em;line-height:1.3}
.pager button{margin:0 .3em}
"""


def _script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def render_html(report: Report) -> str:
    """The whole page. Links to trial folders are relative to ``report.results_href``."""
    href = report.results_href
    base = "" if href in (None, "", ".") else f"{href.rstrip('/')}/"
    policy = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src '{_script_hash(SCRIPT)}'; base-uri 'none'; form-action 'none'"
    )
    parts = (
        sections.header(report),
        sections.scoreboard(report),
        matrix.arm_facts(report),
        matrix.matrix(report),
        sections.cost(report),
        sections.comparisons(report),
        sections.task_grid(report),
        matrix.task_prompts(report),
        sections.flaky(report),
        sections.improvement(report),
        sections.rules(report),
        matrix.false_claims(report),
        trial_view.trials(report, base),
        sections.notes(report),
    )
    body = parts[0] + _contents(parts[1:]) + "".join(parts[1:])
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="harnessdrive {esc(report.schema_)}">'
        f"<title>{esc(report.headline)}</title><style>{STYLE}</style></head>"
        f"<body>{body}<script>{SCRIPT}</script></body></html>\n"
    )


_SECTION = re.compile(r'<section id="([a-z-]+)"><h2>([^<]*)</h2>')


def _contents(parts: tuple[str, ...]) -> str:
    """Links to every section present, in order."""
    links = [
        f'<a href="#{found.group(1)}">{found.group(2)}</a>'
        for part in parts
        if (found := _SECTION.match(part))
    ]
    return '<nav class="toc">' + "".join(links) + "</nav>"
