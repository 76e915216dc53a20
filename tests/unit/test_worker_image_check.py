"""deploy/check_worker_image.py loads against this harnessdrive and refuses bad input plainly.

Building and trying the image takes minutes and a builder (docs/scale.md says what it printed);
this keeps the script in step with the library it imports.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "check_worker_image.py"


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )


def test_an_unknown_cli_is_refused_in_one_line_with_exit_2() -> None:
    done = _check("--builder", sys.executable, "--clis", "claude nosuchcli")
    assert done.returncode == 2
    assert done.stderr == "error: --clis: not a pinned CLI: nosuchcli\n"


def test_a_missing_builder_is_named() -> None:
    done = _check("--builder", "no-such-builder", "--clis", "claude")
    assert done.returncode == 2
    assert done.stderr.startswith("error: needs no-such-builder")
