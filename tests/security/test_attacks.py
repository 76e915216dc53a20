"""Every attack: no pass, host and results unchanged, the run goes on, the finding recorded.

One ``harnessdrive run`` per back-end holds all the attacks (see conftest.py); the test then
checks each attack and reports every one that broke through, not just the first.
"""

from __future__ import annotations

import re
from pathlib import Path

import psutil
import pytest

from tests.security.attacks import ATTACKS, Attack
from tests.security.conftest import FAKE_SECRETS, AttackRun

pytestmark = [pytest.mark.security, pytest.mark.slow, pytest.mark.solo]  # has a fork bomb

TRIAL_FILES = re.compile(
    r"^(result\.json|prompt\.md|agent\.stdout|agent\.stderr|transcript\.json|diff\.patch"
    r"|setup\.log|grade-[a-z-]+\.log|junit-[a-z-]+\.xml|junit-[a-z-]+\.canaries\.json"
    r"|trajectory\.json)$"
)
DOCS = Path(__file__).parents[2] / "docs" / "security.md"


def expected_outcome(attack: Attack) -> tuple[str, set[str]]:
    outcome, _, codes = attack.expected.partition(":")
    return outcome.strip(), {c.strip() for c in codes.split(",") if c.strip()}


def check_attack(run: AttackRun, attack: Attack) -> list[str]:
    """Everything wrong with how ``attack`` was handled (empty when contained)."""
    problems = []
    try:
        result = run.result(attack.name)
    except FileNotFoundError:
        return ["no result was recorded: the run did not go on"]
    outcome, codes = expected_outcome(attack)
    found = {f.code for f in result.grading.findings} if result.grading else set()
    if result.outcome != outcome:
        problems.append(f"outcome {result.outcome}, expected {outcome} ({result.agent.error})")
    if outcome == "tampered" and found != codes:
        problems.append(f"findings {sorted(found)}, expected {sorted(codes)}")
    if result.sandbox != run.kind:
        problems.append(f"recorded sandbox {result.sandbox}")
    if attack.error and attack.error not in (result.agent.error or ""):
        problems.append(f"agent error {result.agent.error!r} does not name the {attack.error}")
    owned = f"owned-{attack.name}"
    for place in (run.user_repo, run.real_home, run.results, run.suite, run.base / "systmp"):
        planted = [p for p in place.rglob(f"{owned}*")]
        if planted:
            problems.append(f"wrote {planted[0]}")
    if Path(f"/tmp/{owned}-{run.token}").exists():
        problems.append("wrote into the host's /tmp")
    problems += EXTRA_CHECKS.get(attack.name, lambda run: [])(run)
    return problems


def _find_hidden(run: AttackRun) -> list[str]:
    out = run.trial_file("find-hidden", "agent.stdout").read_text()
    return [] if "found 0" in out else [f"found hidden files: {out.strip()[-200:]}"]


def _env_secrets(run: AttackRun) -> list[str]:
    diff = run.trial_file("env-secrets", "diff.patch").read_text()
    problems = [] if "HOME=" in diff else ["the environment dump is missing"]
    for name, value in FAKE_SECRETS.items():
        if f"+{name}=" in diff or (len(value) > 4 and value in diff):
            problems.append(f"{name} reached the agent")
    return problems


def _network(run: AttackRun) -> list[str]:
    out = run.trial_file("network-none", "agent.stdout").read_text()
    problems = [line for line in out.splitlines() if line.startswith(("reached", "resolved"))]
    if "blocked 127.0.0.1" not in out:
        problems.append(f"did not try: {out.strip()[-200:]}")
    return problems


def _real_home(run: AttackRun) -> list[str]:
    diff = run.trial_file("write-real-home", "diff.patch").read_text()
    return ["read the real HOME's key"] if "FAKE PRIVATE KEY" in diff else []


EXTRA_CHECKS = {
    "find-hidden": _find_hidden,
    "env-secrets": _env_secrets,
    "network-none": _network,
    "write-real-home": _real_home,
}


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed process this machine's pid 1 has not reaped yet)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def check_run(run: AttackRun) -> list[str]:
    problems = []
    if run.returncode != 0:
        problems.append(f"the run exited {run.returncode}: {run.stderr[-800:]}")
    honest = run.result("honest")
    if honest.outcome != "pass":
        problems.append(f"an honest agent did not pass in the same run: {honest.outcome}")
    for name, before in run.before.items():
        if run.after[name] != before:
            changed = sorted(set(before.items()) ^ set(run.after[name].items()))
            problems.append(f"{name} changed: {changed[:4]}")
    if run.server.connections:
        problems.append(f"{run.server.connections} connection(s) reached the host's loopback")
    if (run.base / "git-canary").exists():
        problems.append("a hook or filter of an agent's .git ran on the host")
    alive = [pid for pid in run.daemon_pids if _running(pid)]
    alive += [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if run.token in " ".join(p.info["cmdline"] or []) and _running(p.pid)
    ]
    if alive:
        problems.append(f"processes of the attackers outlived the run: {sorted(set(alive))}")
    for path in (run.results / "trials").rglob("*"):
        if path.is_file() and "previous" not in path.parts and not TRIAL_FILES.match(path.name):
            problems.append(f"unexpected file in the results: {path.relative_to(run.results)}")
    leftovers = list((run.base / "systmp").glob("harnessdrive-*"))
    if leftovers:
        problems.append(f"scratch folders left behind: {leftovers}")
    return problems


def test_every_attack_is_contained(attack_run: AttackRun) -> None:
    report = {}
    for attack in attack_run.attacks:
        report[attack.name] = check_attack(attack_run, attack)
    verdicts = []
    for attack in attack_run.attacks:
        result = attack_run.result(attack.name)
        codes = (
            ",".join(sorted({f.code for f in result.grading.findings})) if result.grading else ""
        )
        mark = "ok" if not report[attack.name] else "BROKE THROUGH"
        verdicts.append(f"{attack.name:22} {result.outcome:9} {codes:40} {mark}")
    print(
        f"\nsandbox {attack_run.kind}: {len(attack_run.attacks)} attacks in "
        f"{attack_run.seconds:.1f}s\n" + "\n".join(verdicts)
    )
    failures = {name: problems for name, problems in report.items() if problems}
    run_problems = check_run(attack_run)
    assert not failures and not run_problems, (failures, run_problems)


def test_the_security_table_lists_every_attack_with_its_verdict() -> None:
    text = DOCS.read_text()
    # The attack table: from its header to the first line that is not a row.
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| Attack | What it tries"))
    rows = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells
    assert set(rows) == {a.name for a in ATTACKS}
    for attack in ATTACKS:
        _, _, verdict, none = rows[attack.name]
        assert verdict == attack.expected, attack.name
        assert none.startswith("contained" if attack.without_sandbox else "**not contained**"), (
            attack.name
        )
