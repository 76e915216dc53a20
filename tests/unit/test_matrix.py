"""The matrix model: effort ladders and their aliases, treatments per harness, sweeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.errors import UserError
from harnessdrive.harnesses.entry import HarnessEntry
from harnessdrive.harnesses.ladder import EffortLadder
from harnessdrive.harnesses.registry import harness_entry
from harnessdrive.matrix import (
    check_treatment,
    expand_matrix,
    load_sweep,
    load_treatment,
    resolve_effort,
    resolve_matrix,
)
from harnessdrive.matrix.resolve import known_instruction_files
from harnessdrive.running.plan import make_plan
from harnessdrive.tasks.loading import load_suite
from harnessdrive.tasks.matrix_models import TreatmentSpec
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.suites import TaskFiles, write_suite


def test_aliases_name_the_same_position_on_every_ladder() -> None:
    codex, claude, pi = (harness_entry(n).efforts for n in ("codex", "claude", "pi"))
    assert codex is not None and claude is not None and pi is not None
    assert codex.aliases == {"min": "low", "mid": "medium", "max": "xhigh"}
    assert claude.aliases == {"min": "low", "mid": "high", "max": "max"}
    assert pi.aliases == {"min": "off", "mid": "low", "max": "xhigh"}
    assert harness_entry("gemini").efforts == EffortLadder(())


def test_an_alias_is_resolved_to_the_harness_rung_before_planning() -> None:
    variant = resolve_effort(VariantSpec(harness="codex", effort="max"), harness_entry("codex"))
    assert variant.effort == "xhigh"
    same = VariantSpec(harness="codex", effort="high")
    assert resolve_effort(same, harness_entry("codex")) is same


def test_an_unknown_rung_is_refused_naming_the_ladder() -> None:
    with pytest.raises(UserError, match=r"codex has no effort 'hgh' \(did you mean 'high'\?\)"):
        resolve_effort(VariantSpec(harness="codex", effort="hgh"), harness_entry("codex"))
    with pytest.raises(UserError, match="no reasoning-effort setting"):
        resolve_effort(VariantSpec(harness="gemini", effort="max"), harness_entry("gemini"))
    undeclared = HarnessEntry("plug", object)  # type: ignore[arg-type]
    free = VariantSpec(harness="plug", effort="turbo")
    assert resolve_effort(free, undeclared) is free  # the plugin's own check decides
    with pytest.raises(UserError, match="declares no effort ladder"):
        resolve_effort(VariantSpec(harness="plug", effort="min"), undeclared)


def test_an_unknown_rung_stops_the_plan_before_any_trial(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, [TaskFiles("t", files={"a.py": ""})]))
    with pytest.raises(UserError, match="has no effort 'ludicrous'"):
        make_plan(suite, (VariantSpec(harness="codex", model="gpt-5.5", effort="ludicrous"),), 1)
    plan = make_plan(suite, (VariantSpec(harness="claude", model="m", effort="min"),), 1)
    assert [t.variant.effort for t in plan.trials] == ["low"]


def _treatment(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_each_harness_gets_its_own_instruction_file_and_the_shared_ones(tmp_path: Path) -> None:
    folder = _treatment(
        tmp_path / "treatments" / "terse",
        {"AGENTS.md": "be terse", "CLAUDE.md": "be terse", "docs/style.txt": "x"},
    )
    treatment = load_treatment(TreatmentSpec(name="terse"), tmp_path)
    assert treatment.folder == folder.resolve()
    known = known_instruction_files()
    assert {"AGENTS.md", "CLAUDE.md", "GEMINI.md"} <= known
    codex, claude = harness_entry("codex"), harness_entry("claude")
    assert treatment.files_for(codex.instruction_files, known) == ("AGENTS.md", "docs/style.txt")
    assert treatment.files_for(claude.instruction_files, known) == ("CLAUDE.md", "docs/style.txt")
    check_treatment(treatment, codex, known)
    check_treatment(treatment, claude, known)
    with pytest.raises(UserError, match=r"none for gemini \(its instruction file: GEMINI.md\)"):
        check_treatment(treatment, harness_entry("gemini"), known)
    assert treatment.digest(["AGENTS.md"]) != treatment.digest(["CLAUDE.md"])


def test_a_treatment_with_nothing_for_a_harness_is_refused(tmp_path: Path) -> None:
    _treatment(tmp_path / "treatments" / "only-claude", {"CLAUDE.md": "x"})
    treatment = load_treatment(TreatmentSpec(name="only-claude"), tmp_path)
    with pytest.raises(UserError, match="has no files for codex"):
        check_treatment(treatment, harness_entry("codex"), known_instruction_files())
    with pytest.raises(UserError, match="no folder"):
        load_treatment(TreatmentSpec(name="absent"), tmp_path)
    (tmp_path / "treatments" / "linked").mkdir()
    (tmp_path / "treatments" / "linked" / "AGENTS.md").symlink_to("/etc/hostname")
    with pytest.raises(UserError, match="is a link"):
        load_treatment(TreatmentSpec(name="linked"), tmp_path)


def test_a_sweep_crosses_every_dimension_and_each_treatment_has_its_control(
    tmp_path: Path,
) -> None:
    bases = (VariantSpec(harness="codex", model="gpt-5.5"), VariantSpec(harness="claude"))
    expanded = expand_matrix(
        bases,
        models={"claude": ["claude-a", "claude-b"]},
        efforts=["min", "max"],
        treatments=["terse"],
    )
    labels = [v.label for v in expanded]
    assert labels == [
        "codex@gpt-5.5+min",
        "codex@gpt-5.5+min+terse",
        "codex@gpt-5.5+max",
        "codex@gpt-5.5+max+terse",
        "claude@claude-a+min",
        "claude@claude-a+min+terse",
        "claude@claude-a+max",
        "claude@claude-a+max+terse",
        "claude@claude-b+min",
        "claude@claude-b+min+terse",
        "claude@claude-b+max",
        "claude@claude-b+max+terse",
    ]
    assert expand_matrix(bases) == bases
    _treatment(tmp_path / "treatments" / "terse", {"AGENTS.md": "a", "CLAUDE.md": "c"})
    resolved = resolve_matrix(expanded, tmp_path)
    assert [v.effort for v in resolved[:4]] == ["low", "low", "xhigh", "xhigh"]
    assert resolved[1].treatment is not None
    assert resolved[1].treatment.folder == str((tmp_path / "treatments" / "terse").resolve())


def test_a_treated_arm_without_its_control_gets_one(tmp_path: Path) -> None:
    _treatment(tmp_path / "treatments" / "terse", {"AGENTS.md": "a"})
    treated = VariantSpec(harness="codex", model="m", treatment="terse")  # type: ignore[arg-type]
    resolved = resolve_matrix([treated], tmp_path)
    assert [(v.label, v.treatment is None) for v in resolved] == [
        ("codex@m", True),
        ("codex@m+terse", False),
    ]
    control = VariantSpec(harness="codex", model="m")
    assert len(resolve_matrix([control, treated], tmp_path)) == 2


def test_a_sweep_file_is_read_with_paths_against_its_folder(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('harnesses = ["codex"]\nefforts = ["min"]\ntreatments = ["./t", "named"]\n')
    spec = load_sweep(sweep)
    assert spec.treatments == (str(tmp_path / "t"), "named")
    sweep.write_text('efort = ["min"]\n')
    with pytest.raises(UserError, match="efort"):
        load_sweep(sweep)
