"""Every package of harnessdrive says in its ``__init__.py`` docstring what lives there."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "harnessdrive"
DEMO_PROJECT = PACKAGE / "demo" / "suite"
"""The demo's own project, copied into workspaces: not part of harnessdrive."""


def test_every_package_has_a_docstring() -> None:
    packages = [p for p in sorted(PACKAGE.rglob("__init__.py")) if DEMO_PROJECT not in p.parents]
    assert len(packages) > 10
    missing = [
        str(p.relative_to(PACKAGE))
        for p in packages
        if not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))
    ]
    assert missing == []
