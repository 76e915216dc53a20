"""The report as one self-contained HTML file: inline style, inline SVG, one small inline
script, and a Content-Security-Policy that forbids every request (no server, no CDN, nothing
fetched), so the page opens from ``file://`` and a recorded text cannot load anything."""

from __future__ import annotations

import base64
import hashlib

from harnessdrive.report.html import sections
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
pre{background:#f7f7f7;padding:.5em;overflow:auto;max-height:24em;white-space:pre-wrap}
details.trial{border-bottom:1px solid #eee;padding:2px 0}.finding{color:#80a}.mixed-note{color:#a60}
"""

SCRIPT = """
(function () {
  var list = document.getElementById('trial-list');
  var filter = document.getElementById('filter');
  var shown = document.getElementById('shown');
  var expand = document.getElementById('expand');
  if (!list || !filter || !shown || !expand) { return; }
  var trials = Array.prototype.slice.call(list.querySelectorAll('details.trial'));
  filter.addEventListener('input', function () {
    var words = filter.value.toLowerCase();
    var count = 0;
    trials.forEach(function (trial) {
      var hit = trial.textContent.toLowerCase().indexOf(words) !== -1;
      trial.hidden = !hit;
      if (hit) { count += 1; }
    });
    shown.textContent = count + ' of ' + trials.length + ' trials';
  });
  expand.addEventListener('click', function () {
    var open = expand.textContent === 'Expand all';
    trials.forEach(function (trial) { trial.open = open; });
    expand.textContent = open ? 'Collapse all' : 'Expand all';
  });
  document.documentElement.setAttribute('data-ready', String(trials.length));
}());
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
    body = "".join(
        (
            sections.header(report),
            sections.scoreboard(report),
            sections.cost(report),
            sections.comparisons(report),
            sections.task_grid(report),
            sections.flaky(report),
            sections.improvement(report),
            sections.rules(report),
            sections.trials(report, base),
            sections.notes(report),
        )
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="harnessdrive {esc(report.schema_)}">'
        f"<title>{esc(report.headline)}</title><style>{STYLE}</style></head>"
        f"<body>{body}<script>{SCRIPT}</script></body></html>\n"
    )
