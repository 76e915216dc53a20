"""The single-file HTML report (docs/report.md)."""

from harnessdrive.report.html.page import render_html

__all__ = ["render_html"]
