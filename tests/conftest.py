from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.testing.suites import TaskFiles
from tests.browser import Chromium, find_chromium

# pytest-xdist's workers inherit COLUMNS=80 and LINES=24 from their launcher; a user's pipe has
# neither, so output to a pipe here is as wide as it is for them (cli/output.py).
for _size in ("COLUMNS", "LINES"):
    os.environ.pop(_size, None)

ADD_BUGGY = "def add(a, b):\n    return a - b\n"
ADD_FIXED = "def add(a, b):\n    return a + b\n"
ADD_VISIBLE_TEST = "from calc import add\n\n\ndef test_small():\n    assert add(1, 1) == 2\n"
ADD_HIDDEN_TEST = (
    "from calc import add\n\n\ndef test_more():\n    assert add(2, 3) == 5\n\n\n"
    "def test_negative():\n    assert add(-2, 1) == -1\n"
)

GRADE_WITHOUT_RUNNER = "grep -q 'a + b' calc.py"
"""A grade command for ``add_task`` that starts no test runner, for tests of the run driver
(kills, resumes, stops) rather than of grading: such trials take a fraction of a second."""


def add_task(task_id: str = "add", **overrides: object) -> TaskFiles:
    """A tiny task: fix ``add``; visible test in tests/, hidden spec test injected."""
    values: dict[str, object] = {
        "files": {"calc.py": ADD_BUGGY, "tests/test_visible.py": ADD_VISIBLE_TEST},
        "hidden": {"tests/test_hidden.py": ADD_HIDDEN_TEST},
        "solution": {"calc.py": ADD_FIXED},
        "protected": ["tests/**"],
    }
    values.update(overrides)
    return TaskFiles(task_id, **values)  # type: ignore[arg-type]


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own, see _keep_xdist_groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests and real-CLI tests first (each in its collection order), then the rest.

    pytest-xdist hands tests out in this order: a slow test collected last would keep one worker
    busy alone at the end while the others sit idle.
    """
    items.sort(
        key=lambda item: not any(item.iter_markers("slow")) and not any(item.iter_markers("cli"))
    )
    _keep_xdist_groups(items)


def _keep_xdist_groups(items: list[pytest.Item]) -> None:
    """Make ``--dist loadgroup`` keep an ``xdist_group`` on one worker again.

    pytest-xdist 3.8 names a grouped test ``<id>@<group>`` by setting ``item._nodeid``, which
    pytest 9.2 no longer reads, so every group was silently spread over the workers (and two
    Ray clusters started where the tests share one). This copies the grouped id to where pytest
    reads it; it changes nothing where xdist grouped nothing.
    """
    from _pytest.nodeid import coerce_node_id

    for item in items:
        grouped = item.__dict__.get("_nodeid")
        if isinstance(grouped, str) and "@" in grouped and item.nodeid != grouped:
            item._id = coerce_node_id(grouped)


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    return tmp_path / "results"


ARTIFACTS = Path(os.environ.get("HARNESSDRIVE_TEST_ARTIFACTS", "test-artifacts"))
"""Where tests leave what a person looks at afterwards (the report's screenshot)."""


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    """One headless Chromium for the session (the test command installs Debian's package)."""
    binary = find_chromium()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (scripts/test.sh installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    browser = Chromium(binary)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="session", autouse=True)
def _show_every_trial(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Once the tests are over, ``show`` (text, --json, --atif) over every trial folder they
    produced: each is shown or refused in a line, never a crash (tests/show_sweep.py)."""
    yield
    from tests.show_sweep import show_problems, trial_folders

    root = tmp_path_factory.getbasetemp()
    problems = [problem for folder in trial_folders(root) for problem in show_problems(folder)]
    assert not problems, "show failed on trial folders the tests produced:\n" + "\n".join(
        problems[:20]
    )
