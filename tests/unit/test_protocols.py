"""Trial protocols: found by name through the hook, chosen by the task or the variant, and able
to run several rounds whose files land in rounds/N/."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.errors import PluginError, TaskFormatError, UserError
from harnessdrive.plugins.hookspecs import hookimpl
from harnessdrive.plugins.manager import plugin_manager
from harnessdrive.protocols.base import ProtocolInputs, ProtocolOutcome, TrialProtocol
from harnessdrive.protocols.registry import get_protocol, protocols
from harnessdrive.protocols.round import run_round
from harnessdrive.protocols.single import SingleAttempt
from harnessdrive.running.plan import make_plan, run_id_for
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.tasks.identity import suite_identity
from harnessdrive.tasks.loading import Suite, load_suite
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task

SECOND_PROMPT = "Round 2: make it pass again, from a fresh copy."


class TwoRounds:
    """The agent works twice, each time in a fresh copy; the second round decides."""

    name = "two-rounds"

    def run(self, inputs: ProtocolInputs) -> ProtocolOutcome:
        first = run_round(
            inputs.harness,
            inputs.request,
            inputs.snapshot,
            lambda changes: inputs.grade(changes, 1),
            diff_path=inputs.round_paths(1).diff,
            stop=inputs.stop,
        )
        request = inputs.round_request(2, prompt=SECOND_PROMPT, workspace=inputs.new_workspace(2))
        second = run_round(
            inputs.harness,
            request,
            inputs.snapshot,
            lambda changes: inputs.grade(changes, 2),
            diff_path=inputs.round_paths(2).diff,
            stop=inputs.stop,
        )
        passed = [r.verdict.outcome == "pass" for r in (first, second)]
        return ProtocolOutcome(
            rounds=(first, second),
            status=second.status,
            outcome=second.verdict.outcome,
            score=sum(passed) / 2,
            metrics={"rounds_passed": float(sum(passed))},
        )


class _Plugin:
    @hookimpl
    def harnessdrive_protocols(self) -> list[TrialProtocol]:
        return [TwoRounds()]


@pytest.fixture
def two_rounds() -> Iterator[None]:
    plugin = _Plugin()
    plugin_manager().register(plugin, name="test-two-rounds")
    yield
    plugin_manager().unregister(plugin)


def test_the_single_attempt_is_registered_by_name() -> None:
    assert isinstance(get_protocol("single"), SingleAttempt)
    assert isinstance(get_protocol("single"), TrialProtocol)
    with pytest.raises(PluginError, match=r"no trial protocol named 'rounds'.*single"):
        get_protocol("rounds")


def test_a_plugin_protocol_is_found_by_name_and_a_second_single_is_refused(
    two_rounds: None,
) -> None:
    assert set(protocols()) >= {"single", "two-rounds"}

    class Again:
        @hookimpl
        def harnessdrive_protocols(self) -> list[TrialProtocol]:
            return [SingleAttempt()]

    again = Again()
    plugin_manager().register(again, name="test-single-again")
    try:
        with pytest.raises(PluginError, match="'single' is registered twice"):
            protocols()
    finally:
        plugin_manager().unregister(again)


def test_a_task_that_names_an_unregistered_protocol_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    suite = load_suite(write_suite(tmp_path, [add_task(extra={"protocol": "rounds"})]))
    with pytest.raises(TaskFormatError, match=r"task\.toml: protocol 'rounds' is not registered"):
        make_plan(suite, (VariantSpec(harness="reference"),), 1)
    with pytest.raises(UserError, match="variant 'reference': protocol 'x' is not registered"):
        make_plan(load_suite(write_suite(tmp_path / "b", [add_task()])), (_with("x"),), 1)


def _with(protocol: str) -> VariantSpec:
    return VariantSpec(harness="reference", protocol=protocol)


def test_the_task_chooses_a_protocol_of_several_rounds_each_kept_in_its_own_folder(
    tmp_path: Path, two_rounds: None
) -> None:
    suite = load_suite(write_suite(tmp_path, [add_task(extra={"protocol": "two-rounds"})]))
    summary = execute(
        make_plan(suite, (VariantSpec(harness="reference"),), 1),
        RunOptions(results=tmp_path / "results", sandbox="none"),
    )
    (result,) = summary.trials
    assert [(r.number, r.status, r.outcome) for r in result.rounds] == [
        (1, "completed", "pass"),
        (2, "completed", "pass"),
    ]
    assert (result.outcome, result.score, result.metrics) == ("pass", 1.0, {"rounds_passed": 2})
    assert result.totals.rounds == 2
    folder = tmp_path / "results" / "trials" / result.trial_id
    assert (folder / "prompt.md").read_text() == "Make the tests pass."
    assert (folder / "rounds" / "2" / "prompt.md").read_text() == SECOND_PROMPT
    for round_folder in (folder, folder / "rounds" / "2"):
        assert b"calc.py" in (round_folder / "diff.patch").read_bytes()
        assert (round_folder / "transcript.json").is_file()
        assert (round_folder / "grade-tests.log").is_file()
    recorded = json.loads((folder / "result.json").read_text())
    assert [r["number"] for r in recorded["rounds"]] == [1, 2]


def test_a_variant_overrides_the_task_protocol(tmp_path: Path, two_rounds: None) -> None:
    suite = load_suite(write_suite(tmp_path, [add_task()]))
    twice = VariantSpec(harness="reference", name="twice", protocol="two-rounds")
    plan = make_plan(suite, (VariantSpec(harness="reference"), twice), 1)
    summary = execute(plan, RunOptions(results=tmp_path / "results", sandbox="none"))
    rounds = {r.variant_label: len(r.rounds) for r in summary.trials}
    assert rounds == {"reference": 1, "twice": 2}


def test_a_variant_that_chooses_no_protocol_keeps_its_run_id(tmp_path: Path) -> None:
    suite: Suite = load_suite(write_suite(tmp_path, [add_task()]))
    plain = VariantSpec(harness="reference")
    dump = plain.model_dump(mode="json")
    dump.pop("protocol")
    dump.pop("treatment")  # nor one without a treatment (docs/matrix.md)
    identity = {
        "suite": suite_identity(suite),
        "folder": str(suite.folder),
        "variants": [dump],
        "repeat": 1,
    }
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]
    assert run_id_for(suite, (plain,), 1) == f"{suite.name}-{digest}"
    assert run_id_for(suite, (_with("single"),), 1) != run_id_for(suite, (plain,), 1)
