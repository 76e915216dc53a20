"""Verifiers of the answer: the task grader's verdict, the visible tests, tampering, and what
the agent said at the end."""

from __future__ import annotations

from harnessdrive.grading.verdict import Verdict
from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput


def _grading(output: CaseOutput) -> Verdict:
    grading = output.result.grading
    if grading is None or grading.outcome in ("not_graded", "error"):
        reason = grading.error if grading is not None and grading.error else "not graded"
        raise CannotEvaluate(f"{output.cell.id}: the task's grader gave no verdict ({reason})")
    return grading


def check_hidden_tests_passed(output: CaseOutput) -> None:
    """The task's grader passed the change (its hidden tests, for a task folder)."""
    _grading(output)
    if output.result.outcome != "pass":
        raise AssertionError(f"{output.cell.id}: the task's grader says {output.result.outcome}")


def check_grader_failed(output: CaseOutput) -> None:
    """The task's grader failed the change: for a negative control (an arm that must not be
    able to solve the task, such as one without the skill)."""
    grading = _grading(output)
    if grading.outcome != "fail":
        raise AssertionError(f"{output.cell.id}: the task's grader says {grading.outcome}")


def check_visible_tests_passed(output: CaseOutput) -> None:
    """The task's visible tests (those the agent could run itself) passed in grading."""
    visible = _grading(output).visible
    if visible is None:
        raise CannotEvaluate(f"{output.cell.id}: the task has no visible test command")
    if visible.exit_code != visible.expected_exit or visible.failed or visible.errors:
        raise AssertionError(
            f"{output.cell.id}: visible tests: {visible.passed}/{visible.total} passed "
            f"(exit {visible.exit_code})"
        )


def check_no_tampering(output: CaseOutput) -> None:
    """Grading found no tampering: protected files, tests or graders left as they were."""
    findings = _grading(output).findings
    if findings:
        shown = "; ".join(f"{f.code}: {f.path or f.detail}" for f in findings[:3])
        raise AssertionError(f"{output.cell.id}: {len(findings)} finding(s): {shown}")


def check_final_message_contains(output: CaseOutput, *texts: str) -> None:
    """The agent's last message holds each of ``texts`` (case-insensitive)."""
    if not texts:
        raise CannotEvaluate("check_final_message_contains needs at least one text")
    final = output.transcript.final_message
    if final is None:
        raise CannotEvaluate(f"{output.cell.id}: the harness recorded no final message")
    missing = [t for t in texts if t.lower() not in final.lower()]
    if missing:
        raise AssertionError(
            f"{output.cell.id}: the final message lacks {', '.join(map(repr, missing))}: "
            f"{final[:80]!r}"
        )
