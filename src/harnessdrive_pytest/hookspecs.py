"""The hooks the eval plugin adds to pytest (declared in a project's ``conftest.py``)."""

from __future__ import annotations

from typing import Any

import pytest


def pytest_harnessdrive_gates(config: pytest.Config) -> Any:
    """Return the session's gates (``harnessdrive.pytest_plugin.gates``): a list of
    ``expect_no_regression``, ``expect_at_least`` and ``expect_pareto_contains``. A gate that
    does not hold fails the session."""
