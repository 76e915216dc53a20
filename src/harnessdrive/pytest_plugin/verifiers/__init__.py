"""The verifiers a case calls on its :class:`~harnessdrive.pytest_plugin.CaseOutput`, by
theme: the run (:mod:`.run`), the files it left (:mod:`.files`), what it did on the way
(:mod:`.actions`), what it spent (:mod:`.spend`), its context and subagents (:mod:`.context`),
the skill (:mod:`.skill`) and the answer (:mod:`.answer`). Each fails with an AssertionError
saying what the agent did; one that cannot tell raises
:class:`~harnessdrive.pytest_plugin.CannotEvaluate`, never passes."""

from harnessdrive.pytest_plugin.verifiers.actions import (
    check_commands_not_run,
    check_commands_ran,
    check_subagents_spawned,
    check_tool_calls_within,
    check_tools_not_used,
    check_tools_used,
    check_turns_within,
)
from harnessdrive.pytest_plugin.verifiers.answer import (
    check_final_message_contains,
    check_grader_failed,
    check_hidden_tests_passed,
    check_no_tampering,
    check_visible_tests_passed,
)
from harnessdrive.pytest_plugin.verifiers.combined import (
    check_all,
    check_content_preserved,
    check_tool_under_test,
)
from harnessdrive.pytest_plugin.verifiers.context import (
    check_compactions_within,
    check_long_context_calls_within,
    check_subagent_spend_within,
)
from harnessdrive.pytest_plugin.verifiers.files import (
    check_block_preserved,
    check_changes_within,
    check_diff_within,
    check_file_contains,
    check_file_lacks,
    check_file_matches,
    check_file_unchanged,
    check_files_deleted,
    check_files_written,
    check_no_files_added,
    check_no_files_deleted,
)
from harnessdrive.pytest_plugin.verifiers.run import (
    check_exit_clean,
    check_no_errors,
    check_no_permission_denials,
    check_not_timed_out,
    check_rollout,
    check_run_is_priced,
    check_run_is_real,
)
from harnessdrive.pytest_plugin.verifiers.skill import (
    check_skill_context_within,
    check_skill_invoked,
    check_skill_scripts_ran,
    check_skill_was_loaded,
)
from harnessdrive.pytest_plugin.verifiers.spend import (
    check_cache_reused,
    check_cost_within,
    check_peak_context_within,
    check_seconds_within,
    check_tokens_within,
)

__all__ = [
    "check_all",
    "check_block_preserved",
    "check_cache_reused",
    "check_changes_within",
    "check_commands_not_run",
    "check_commands_ran",
    "check_compactions_within",
    "check_content_preserved",
    "check_cost_within",
    "check_diff_within",
    "check_exit_clean",
    "check_file_contains",
    "check_file_lacks",
    "check_file_matches",
    "check_file_unchanged",
    "check_files_deleted",
    "check_files_written",
    "check_final_message_contains",
    "check_grader_failed",
    "check_hidden_tests_passed",
    "check_long_context_calls_within",
    "check_no_errors",
    "check_no_files_added",
    "check_no_files_deleted",
    "check_no_permission_denials",
    "check_no_tampering",
    "check_not_timed_out",
    "check_peak_context_within",
    "check_rollout",
    "check_run_is_priced",
    "check_run_is_real",
    "check_seconds_within",
    "check_skill_context_within",
    "check_skill_invoked",
    "check_skill_scripts_ran",
    "check_skill_was_loaded",
    "check_subagent_spend_within",
    "check_subagents_spawned",
    "check_tokens_within",
    "check_tool_calls_within",
    "check_tool_under_test",
    "check_tools_not_used",
    "check_tools_used",
    "check_turns_within",
    "check_visible_tests_passed",
]
