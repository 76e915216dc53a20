"""Content attacks, each under bubblewrap and under ``--sandbox none``: every one is graded.

The checks of test_attacks.py hold here too (no host effect, the run goes on, the honest agent
passes, nothing unexpected in the results folder); and each attack must be graded as a ``fail``,
never ``not_graded`` or ``could_not_run``, with what was left out named in the result.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandboxes import require_bwrap
from tests.security.conftest import AttackRun, _run_attacks
from tests.security.content_attacks import CONTENT_ATTACKS, CONTENT_LIMITS
from tests.security.test_attacks import check_attack, check_run

# One worker runs the module, so its shared fixtures are built once (tests/conftest.py).
pytestmark = [pytest.mark.security, pytest.mark.slow, pytest.mark.xdist_group("content-attacks")]

MiB = 1024 * 1024
LEFT_OUT = {
    "names-options-and-globs": {
        (b":(glob)**", "oversized-file"),
        (b":(exclude)*", "oversized-file"),
        (b"big-", "oversized-file"),
        (b"big*.py", "oversized-file"),
    },
    "nested-clone": {(b"vendor/dep", "nested-repository"), (b"tests/dep", "nested-repository")},
    "nested-repo-no-commit": {(b"sub", "nested-repository"), (b"mod", "nested-repository")},
    "sparse-2gb": {(b"huge.bin", "oversized-file")},
    "oversized-real": {(b"blob.bin", "oversized-file"), (b"README.md", "oversized-file")},
}


@pytest.fixture(scope="module", params=["bwrap", "none"])
def content_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AttackRun]:
    kind = request.param
    if kind == "bwrap":
        require_bwrap()
    base = tmp_path_factory.mktemp(f"content-{kind}")
    run = _run_attacks(base, kind, CONTENT_ATTACKS, CONTENT_LIMITS)
    yield run
    run.server.sock.close()


def _problems(run: AttackRun, name: str) -> list[str]:
    result = run.result(name)
    problems = []
    if result.status in ("could_not_run", "interrupted") or result.outcome == "not_graded":
        problems.append(f"not graded: {result.status}/{result.outcome} {result.note}")
    if result.grading is None or result.grading.hidden is None:
        problems.append("the hidden tests never ran")
        return problems
    left = {
        (p.path.encode("utf-8", "surrogateescape"), p.code)
        for p in result.grading.left_out
        if p.path is not None
    }
    wanted = LEFT_OUT.get(name)
    if wanted is not None and left != wanted:
        problems.append(f"left out {sorted(left)}, expected {sorted(wanted)}")
    if name.startswith("stdout-flood"):
        stdout = result.agent.stdout
        if stdout is None or not stdout.cut or stdout.bytes_written <= 4 * MiB:
            problems.append(f"stdout not recorded as cut: {stdout}")
        for log in ("agent.stdout", "agent.stderr"):
            size = run.trial_file(name, log).stat().st_size
            if size > 5 * MiB:
                problems.append(f"{log} is {size} bytes")
    folder = run.trial_file(name, "result.json").parent
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    if size > 20 * MiB:
        problems.append(f"the trial folder holds {size} bytes")
    return problems


def test_every_content_attack_is_graded(content_run: AttackRun) -> None:
    report = {}
    for attack in content_run.attacks:
        report[attack.name] = check_attack(content_run, attack) + _problems(
            content_run, attack.name
        )
    failures = {name: problems for name, problems in report.items() if problems}
    assert not failures and not check_run(content_run), (failures, check_run(content_run))
    assert {a.name for a in content_run.attacks} == {a.name for a in CONTENT_ATTACKS}


def test_the_security_doc_lists_every_content_attack() -> None:
    text = (Path(__file__).parents[2] / "docs" / "security.md").read_text()
    missing = [a.name for a in CONTENT_ATTACKS if f"`{a.name}`" not in text]
    assert missing == []
