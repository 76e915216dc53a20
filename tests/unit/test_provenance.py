"""provenance_differences: what two arms differ in beyond their harness, model, effort and
treatment."""

from __future__ import annotations

from typing import Any

from harnessdrive.report.provenance import provenance_differences
from harnessdrive.store.provenance import Provenance
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.matrix_models import TreatmentSpec
from harnessdrive.tasks.models import VariantSpec
from tests.trial_results import trial_result

BASE = Provenance(
    harnessdrive_version="1.0",
    cli_version="0.9.1",
    config_hash="c1",
    tools=("permissions=least",),
    instructions_hash=None,
    start_tree="t-base",
    models_reported=("gpt-5.5",),
    sandbox="bwrap",
)


def arm(
    harness: str = "codex",
    *,
    model: str = "gpt-5.5",
    treatment: str | None = None,
    tasks: tuple[str, ...] = ("a", "b"),
    **changes: Any,
) -> list[TrialResult]:
    variant = VariantSpec(
        harness=harness,
        model=model,
        treatment=TreatmentSpec(name=treatment) if treatment else None,
    )
    return [
        trial_result(
            task,
            harness,
            variant_label=variant.label,
            status="completed",
            outcome="pass",
            provenance=BASE.model_copy(update=changes),
        ).model_copy(update={"variant": variant})
        for task in tasks
    ]


def fields(a: list[TrialResult], b: list[TrialResult]) -> dict[str, str]:
    return {d.field: d.why for d in provenance_differences(a, b)}


def test_identical_arms_differ_in_nothing() -> None:
    assert fields(arm(), arm()) == {}


def test_what_the_matrix_says_they_differ_in_is_not_reported() -> None:
    other_harness = arm(
        "claude", cli_version="2.1", tools=("--allowedTools Bash",), config_hash="x"
    )
    assert fields(arm(), other_harness) == {}
    # Both pin gpt-5.5, yet one API answered as another model: the matrix does not say so.
    rerouted = arm("claude", cli_version="2.1", models_reported=("gpt-5.5-mini",))
    assert fields(arm(), rerouted) == {"models_reported": "differs between the arms"}
    treated = arm(treatment="terse", instructions_hash="i1", start_tree="t-treated")
    assert fields(arm(), treated) == {}
    other_model = arm(model="gpt-5.4", models_reported=("gpt-5.4",), config_hash="c2")
    assert fields(arm(), other_model) == {}


def test_a_difference_the_matrix_does_not_explain_is_reported() -> None:
    upgraded = arm(cli_version="0.9.2", sandbox="none")
    found = {d.field: (d.a, d.b) for d in provenance_differences(arm(), upgraded)}
    assert found == {"cli_version": (("0.9.1",), ("0.9.2",)), "sandbox": (("bwrap",), ("none",))}
    edited = arm(instructions_hash="i-repo", start_tree="t-edited")
    assert set(fields(arm(), edited)) == {"instructions_hash", "start_tree"}


def test_a_field_that_varies_within_an_arm_is_reported() -> None:
    mixed = [*arm(), *arm(tasks=("a",), cli_version="0.9.2")]
    assert fields(arm(), mixed)["cli_version"] == "differs between the arms"
    assert fields(mixed, mixed) == {"cli_version": "varies within A"}


def test_only_the_tasks_both_arms_ran_are_compared_and_missing_records_show() -> None:
    extra = arm(tasks=("a", "b", "c"))
    extra[2] = extra[2].model_copy(
        update={"provenance": BASE.model_copy(update={"sandbox": "none"})}
    )
    assert fields(arm(), extra) == {}
    old = [r.model_copy(update={"provenance": None}) for r in arm()]
    assert "cli_version" in fields(arm(), old)


def test_configurations_that_vary_say_how_many_and_which_setting_in_place_of_hashes() -> None:
    parts = {"--model": "m1", "env CODEX_HOME": "e1", "file .codex/config.toml": "f1"}
    first = arm(config_hash="c1", config_parts=parts)
    other = {**parts, "file .codex/config.toml": "f2"}
    varied = [
        *arm(config_hash="c1", config_parts=parts),
        *arm(config_hash="c2", config_parts=other),
    ]
    [found] = provenance_differences(first, varied)
    assert (found.field, found.why) == ("config_hash", "differs between the arms")
    assert found.summary == (
        "A: 1 configuration over 2 trials, B: 2 configurations over 4 trials; "
        "they differ in file .codex/config.toml"
    )
    unnamed = [*arm(config_hash="c1"), *arm(config_hash="c2")]
    [found] = provenance_differences(unnamed, unnamed)
    assert found.summary is not None
    assert found.summary.endswith("the trials do not record which setting differs")
