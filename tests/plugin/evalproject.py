"""A user's repository with a skill and its evals, written for the pytest plugin's tests."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SECRET_EVAL = "EVAL-FILE-SECRET-7f3a"
SECRET_GOLDEN = "GOLDEN-SECRET-91c2"
SECRET_SKILL_EVAL = "SKILL-EVALS-SECRET-0b5e"

GRADE = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -m pytest -q -p no:cacheprovider check_calc.py"
SKILL_MD = "# greet\nWrite a greeting into OUTPUT.md by running scripts/hello.sh.\n"
HELLO = '#!/bin/sh\necho "hello from the skill" > OUTPUT.md\n'


def spy(root: Path, dialect_folder: str = ".skills") -> dict[str, Any]:
    """A scripted agent (the ``command`` harness) that runs the skill's script, then tries to
    read the eval file, the golden and the skill's evals/ under ``root`` and writes what it
    found into found.txt."""
    evals = root / "skills" / "greet" / "evals"
    targets = [
        evals / "eval_greet.py",
        evals / "goldens" / "basic" / "golden.json",
        evals / "cases.md",
    ]
    reads = " ".join(f'"{p}"' for p in targets)
    secrets = " ".join(f"-e {s}" for s in (SECRET_EVAL, SECRET_GOLDEN, SECRET_SKILL_EVAL))
    script = (
        f"sh {dialect_folder}/greet/scripts/hello.sh; "
        f'for p in {reads}; do cat "$p" >> found.txt 2>&1; done; '
        f'grep -rl SECRET "{root}" >> found.txt 2>&1; '
        f'ls -R "{root / "skills"}" >> found.txt 2>&1; '
        # Nor is a copy anywhere it can reach: its workspace, its HOME, its temporary folder.
        f'grep -rIl --exclude=hits.txt {secrets} . "$HOME" "$TMPDIR" > hits.txt 2>/dev/null; true'
    )
    return {"harness": "command", "name": "spy", "options": {"template": f"sh -c '{script}'"}}


def write_project(
    root: Path,
    *,
    greet_models: Sequence[Any],
    task_models: Sequence[Any] = ("reference", "noop"),
    ini: Mapping[str, str] | None = None,
) -> Path:
    """``root``: pyproject.toml, skills/greet (SKILL.md, scripts/, evals/ with two cases)."""
    skill = root / "skills" / "greet"
    evals = skill / "evals"
    for folder in (
        "scripts",
        "evals/fixtures/basic",
        "evals/goldens/basic",
        "evals/task/repo",
        "evals/task/hidden",
        "evals/task/solution",
    ):
        (skill / folder).mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "scripts" / "hello.sh").write_text(HELLO)
    (evals / "fixtures" / "basic" / "README.md").write_text("a project\n")
    (evals / "cases.md").write_text(f"{SECRET_SKILL_EVAL}\n")
    (evals / "goldens" / "basic" / "golden.json").write_text(f'{{"secret": "{SECRET_GOLDEN}"}}\n')
    (evals / "task" / "repo" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (evals / "task" / "solution" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (evals / "task" / "hidden" / "check_calc.py").write_text(
        "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    (evals / "task" / "task.toml").write_text(
        textwrap.dedent(
            """\
            id = "add"
            prompt = "Fix add in calc.py."
            [repo]
            path = "repo"
            [grade]
            command = "{GRADE}"
            """
        ).replace("{GRADE}", GRADE)
    )
    (evals / "eval_greet.py").write_text(
        textwrap.dedent(
            f"""\
            # {SECRET_EVAL}
            import harnessdrive
            from harnessdrive.pytest_plugin import (
                CaseOutput, check_files_written, check_hidden_tests_passed, check_rollout,
                check_skill_scripts_ran, check_skill_was_loaded,
            )
            REAL = ("claude", "codex")

            GREET = {list(greet_models)!r}
            TASK = {list(task_models)!r}

            @harnessdrive.evalcase("say hello", skill="greet", fixture="basic", models=GREET)
            def eval_hello(output: CaseOutput) -> None:
                if output.cell.variant.harness in REAL:
                    check_rollout(output)
                    check_skill_scripts_ran(output, "scripts/hello.sh")
                    check_skill_was_loaded(output, "scripts/hello.sh")
                check_files_written(output, "OUTPUT.md")
                assert "hello from the skill" in output.read("OUTPUT.md")
                if output.cell.variant.name == "spy":
                    found = output.read("found.txt")
                    for secret in ({SECRET_EVAL!r}, {SECRET_GOLDEN!r}, {SECRET_SKILL_EVAL!r}):
                        assert secret not in found, found
                    assert found.count("No such file or directory") >= 4, found
                    assert output.read("hits.txt") == "", output.read("hits.txt")

            @harnessdrive.evalcase(task_dir="task", models=TASK)
            def eval_add(output: CaseOutput) -> None:
                if output.cell.variant.harness in REAL:
                    check_rollout(output)
                check_hidden_tests_passed(output)
            """
        )
    )
    lines = ["[tool.pytest.ini_options]"]
    for key, value in (ini or {}).items():
        lines.append(f"{key} = {value}")
    (root / "pyproject.toml").write_text("\n".join(lines) + "\n")
    return root


def write_matrix_case(
    root: Path,
    models: Sequence[str],
    *,
    repeat: int = 1,
    treatment: Sequence[str] = ("AGENTS.md", "CLAUDE.md"),
    name: str = "matrix",
) -> Path:
    """``evals/eval_matrix.py``: one inline case over ``models`` with a treatment."""
    evals = root / "evals"
    (evals / "fixtures" / "start").mkdir(parents=True, exist_ok=True)
    (evals / "fixtures" / "start" / "README.md").write_text("start\n")
    (evals / "treatments" / name).mkdir(parents=True, exist_ok=True)
    for file in treatment:
        (evals / "treatments" / name / file).write_text("Be terse.\n")
    (evals / f"eval_{name}.py").write_text(
        "import harnessdrive\n\n"
        f"@harnessdrive.evalcase('tidy up', fixture='start', models={list(models)!r},\n"
        f"                       treatments=[{name!r}], repeat={repeat})\n"
        "def eval_tidy(output):\n"
        "    raise AssertionError('a dry run never calls the case')\n"
    )
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    return evals / f"eval_{name}.py"
