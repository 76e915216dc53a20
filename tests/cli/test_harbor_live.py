"""A real agent CLI (claude, pinned) solves an imported Harbor task inside an OCI root, driven by
the scripted model: its binary is bound in read-only from the host, the image provides the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.demo.scripted import scripted_prices
from harnessdrive.harbor.importer import ImportOptions, import_harbor
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.tasks import load_suite
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.model_server import ModelServer, Script, Shell, Turn
from tests.cli.conftest import cli_binary, endpoint_for
from tests.images import image_cache, python_image

pytestmark = pytest.mark.cli

DATASET = Path(__file__).resolve().parent.parent / "fixtures" / "harbor" / "dataset"
SCRIPT = Script(
    turns=(
        # The fix is made only where /etc/image-layer exists: the image's second layer has
        # it, the host does not, so a pass shows the CLI's shell ran inside the image.
        Turn(
            text="Fixing add.",
            actions=(Shell(command="test -f /etc/image-layer && sed -i 's/a - b/a + b/' calc.py"),),
        ),
        Turn(text="Fixed add."),
    )
)


def test_claude_fixes_a_harbor_task_inside_its_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESSDRIVE_IMAGE_CACHE", str(image_cache() / "unpacked"))
    suite = tmp_path / "suite"
    fix_add = DATASET / "fix-add"
    report = import_harbor(
        fix_add,
        suite,
        ImportOptions(images={"harnessdrive-test/debian-python:1": python_image()}),
    )
    assert report.written == ["fix-add"], report.refused
    binary = cli_binary("claude")
    with ModelServer(SCRIPT) as server:
        variant = VariantSpec(
            harness="claude",
            name="claude",
            model="claude-sonnet-4-5",
            options={"binary": str(binary), "endpoint": endpoint_for(server.base_url)},
        )
        loaded = load_suite(suite)
        plan = make_plan(loaded, (variant,), 1)
        summary = execute(
            plan,
            RunOptions(
                results=tmp_path / "results",
                sandbox="bwrap",
                network="loopback",
                price_records=scripted_prices(["claude-sonnet-4-5"]),
            ),
        )
        problems = [r for r in server.requests if r.kind in ("error", "overrun", "side")]
    assert problems == [], [(r.kind, r.error) for r in problems]
    [result] = summary.trials
    assert (result.status, result.outcome) == ("completed", "pass"), (result.note, result.rounds)
    assert result.sandbox == "bwrap"
