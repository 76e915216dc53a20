"""aider, headless: one ``--message-file`` and ``--yes-always``.

aider has no tools: it applies the edit blocks the model writes in its answer, and it asks before
adding a file to the chat or running a suggested shell command. ``--yes-always`` says yes to the
first but, by aider's design, *no* to running commands, so **aider never runs a command the model
suggests in a headless run**. With the variant option ``auto_test = true`` aider runs the task's
visible test command itself after each edit and shows the model the failures.

Files: by default none are added up front; aider's repository map shows the model the files, and
files the model names are added (``--yes-always``) and the model asked again. ``files = "all"``
adds every tracked file, or give a list. Usage: ``--verbose`` makes aider print each API response,
with the exact token counts the API reported (its one-line "Tokens:" summary rounds above 1000).
Session log: the chat history and analytics log, written to the trial's private HOME (by default
aider writes them into the repository, where they would count as the agent's changes).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

from pydantic import StrictBool, StrictStr

from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.cli_run import CliRun, Collected, Launch
from harnessdrive.harnesses.cli.flags import FlagTable
from harnessdrive.harnesses.cli.options import CliOptions
from harnessdrive.harnesses.cli.recording import (
    SessionLogError,
    TranscriptBuilder,
    litellm_usage,
    logged_time,
    read_jsonl,
)
from harnessdrive.sandbox.commands import render
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.tasks.models import VariantSpec

FLAGS = FlagTable(
    {
        "model": "--model",
        "message_file": "--message-file",
        "yes": "--yes-always",
        "no_auto_commits": "--no-auto-commits",
        "no_check_update": "--no-check-update",
        "analytics_disable": "--analytics-disable",
        "analytics_log": "--analytics-log",
        "no_model_warnings": "--no-show-model-warnings",
        "no_release_notes": "--no-show-release-notes",
        "no_pretty": "--no-pretty",
        "no_stream": "--no-stream",
        "verbose": "--verbose",
        "no_gitignore": "--no-gitignore",
        "chat_history": "--chat-history-file",
        "input_history": "--input-history-file",
        "llm_history": "--llm-history-file",
        "edit_format": "--edit-format",
        "reasoning_effort": "--reasoning-effort",
        "test_cmd": "--test-cmd",
        "auto_test": "--auto-test",
    }
)
_ALWAYS = (
    "yes",
    "no_auto_commits",
    "no_check_update",
    "analytics_disable",
    "no_model_warnings",
    "no_release_notes",
    "no_pretty",
    "no_stream",
    "verbose",
    "no_gitignore",
)
_RESPONSE = re.compile(r"^ModelResponse\(.*$", re.MULTILINE)
_MODEL = re.compile(r"\bmodel='([^']*)'")
_CONTENT = re.compile(r"message=Message\(content=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
_FIELD = re.compile(r"\b([a-z_]+)=(\d+)")
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$", re.MULTILINE)
_SUGGESTED = re.compile(r"```(?:bash|sh|shell)\n(.*?)```", re.DOTALL)
_ADDED_OUTPUT = re.compile(r"^Added \d+ lines? of output to the chat\.")
_LITELLM_ERROR = re.compile(r"^(litellm\.\w+(?:Error|Exception)\b.*)$", re.MULTILINE)
EditFormat = Literal["diff", "whole", "udiff", "diff-fenced", "editor-diff", "editor-whole"]
# Non-empty, so aider does not download litellm's price list at start-up; models are then
# looked up in litellm's bundled copy (LITELLM_LOCAL_MODEL_COST_MAP).
_PRICE_CACHE_SEED: dict[str, dict[str, object]] = {"harnessdrive-offline-placeholder": {}}


class AiderOptions(CliOptions):
    """aider's variant options: the common ones and its own."""

    expected: ClassVar[dict[str, str]] = {
        **CliOptions.expected,
        "files": '"none", "all" or a list of paths',
        "edit_format": f"one of {', '.join(get_args(EditFormat))}",
        "auto_test": "true or false",
    }

    files: Literal["none", "all"] | list[StrictStr] = "none"
    """Files added to the chat up front: ``"none"``, ``"all"`` tracked files, or a list."""
    edit_format: EditFormat | None = None
    """How the model writes its edits (``--edit-format``); default: aider's choice per model."""
    auto_test: StrictBool = False
    """Run the task's visible test command after each edit and show the model the failures."""


class Aider(AgentCli):
    name = "aider"
    executables = ("aider",)
    flags = FLAGS
    protocol = "openai"
    efforts = ("low", "medium", "high")
    options_model = AiderOptions
    auth_env = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY")
    login_hint = "sign in: set the API key variable of the model's provider (OPENAI_API_KEY, ...)"
    base_url_env = ("OPENAI_API_BASE", "https://api.openai.com/v1")
    supports = (
        "model (litellm id), effort (--reasoning-effort), endpoint (Chat Completions), "
        "auto_test; edits by answer text, never runs suggested shell commands"
    )

    def base_url_setting(self, variant: VariantSpec) -> tuple[str, str] | None:
        # litellm's OpenAI base serves ``openai/...`` models only; the others bypass the proxy.
        return self.base_url_env if (variant.model or "").startswith("openai/") else None

    def launch(self, run: CliRun) -> Launch:
        caches = run.home / ".aider" / "caches"
        caches.mkdir(parents=True, exist_ok=True)
        (caches / "model_prices_and_context_window.json").write_text(json.dumps(_PRICE_CACHE_SEED))
        logs = log_dir(run)
        logs.mkdir(parents=True, exist_ok=True)
        argv = [str(run.binary)]
        model = run.variant.model
        if run.endpoint is not None:
            model = f"openai/{model or 'default'}"
        if model:
            argv += [FLAGS["model"], model]
        argv += [FLAGS["message_file"], str(run.prompt_file)]
        argv += [FLAGS[purpose] for purpose in _ALWAYS]
        argv += [FLAGS["analytics_log"], str(logs / "analytics.jsonl")]
        argv += [FLAGS["chat_history"], str(logs / "chat-history.md")]
        argv += [FLAGS["input_history"], str(logs / "input-history.txt")]
        argv += [FLAGS["llm_history"], str(logs / "llm-history.txt")]
        options = _options(run)
        if options.edit_format is not None:
            argv += [FLAGS["edit_format"], options.edit_format]
        if run.variant.effort:
            argv += [FLAGS["reasoning_effort"], run.variant.effort]
        if options.auto_test:
            command = _test_command(run)
            if command:
                argv += [FLAGS["test_cmd"], command, FLAGS["auto_test"]]
        argv += _files(run)
        env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        if run.endpoint is not None:
            env["OPENAI_API_BASE"] = run.endpoint.url
            env["OPENAI_API_KEY"] = run.endpoint.api_key
        return Launch(argv=argv, env=env)

    def collect(self, run: CliRun, stdout: str, result: ProcessResult) -> Collected:
        _remove_caches(run.workspace)
        builder = TranscriptBuilder(run.workspace)
        history = log_dir(run) / "chat-history.md"
        analytics = log_dir(run) / "analytics.jsonl"
        responses = _RESPONSE.findall(stdout)
        logged = read_jsonl(analytics) if analytics.is_file() else []
        sends = [event for event in logged if event.get("event") == "message_send"]
        if not history.is_file():
            if result.exit_code == 0 and responses:
                raise SessionLogError(f"aider made model calls but wrote no chat history {history}")
            for error in _LITELLM_ERROR.findall(stdout):
                builder.error(error)
            return Collected(builder.build())
        if len(sends) != len(responses):
            raise SessionLogError(
                f"stdout shows {len(responses)} model responses, the analytics log "
                f"{len(sends)} sends"
            )
        provider = self.model_provider(run, _prefix(run.variant.model))
        final = None
        for line, send in zip(responses, sends, strict=True):
            # Its analytics log times each send in whole seconds since the epoch; nothing else
            # aider prints or logs has a time with a zone.
            stamp = logged_time(send.get("time"), epoch="s")
            start = builder.mark()
            text = _content(line)
            if text:
                with builder.timed(stamp):
                    builder.message(text)
                    final = text
                    for command in _SUGGESTED.findall(text):
                        # aider answers its own "Run shell command?" with no when headless.
                        builder.event("note", f"suggested, not run: {command.strip()}")
            found = _MODEL.search(line)
            usage = litellm_usage(_usage_fields(line))
            model = found.group(1) if found else ""
            builder.call(model, usage, provider, time=stamp, position=start)
        for path in _APPLIED.findall(stdout):
            builder.file_change(path.strip(), "edit")
        for command, exit_code in _test_runs(stdout):
            builder.command(command, exit_code)
        for error in _LITELLM_ERROR.findall(stdout):
            builder.error(error)
        cost = sends[-1].get("properties", {}).get("total_cost") if sends else None
        extras = tuple(p for p in (analytics, log_dir(run) / "llm-history.txt") if p.is_file())
        return Collected(
            builder.build(
                final_message=final,
                reported_cost_usd=(
                    float(cost) if isinstance(cost, int | float) and run.endpoint is None else None
                ),
            ),
            session_log=history,
            extra_logs=extras,
        )


def _test_runs(stdout: str) -> list[tuple[str, int | None]]:
    """The test commands aider ran (``auto_test``), with their exit codes.

    aider prints no exit code, but it adds a test's output to the chat exactly when the command
    failed, so a run followed by "Added ... of output" failed (its code unknown) and one without
    passed.
    """
    runs: list[tuple[str, int | None]] = []
    for line in stdout.splitlines():
        if line.startswith("Running command: "):
            runs.append((line.removeprefix("Running command: ").strip(), 0))
        elif _ADDED_OUTPUT.match(line) and runs:
            runs[-1] = (runs[-1][0], None)
    return runs


def _options(run: CliRun) -> AiderOptions:
    assert isinstance(run.options, AiderOptions)  # Aider.options_model parsed them
    return run.options


def log_dir(run: CliRun) -> Path:
    return run.home / "aider-logs"


def _test_command(run: CliRun) -> str:
    command = run.request.task.spec.grade.visible_test_command
    if not command:
        return ""
    return render(command, {"python": run.request.python, "workspace": str(run.workspace)})


def _files(run: CliRun) -> list[str]:
    files = _options(run).files
    if files == "none":
        return []
    if files == "all":
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=run.workspace, capture_output=True, check=False
        )
        return [name for name in listed.stdout.decode(errors="replace").split("\0") if name]
    return list(files)


def _remove_caches(workspace: Path) -> None:
    # aider's repository-map cache lands in the repository; it is aider's, not the agent's work.
    for cache in workspace.glob(".aider.tags.cache.v*"):
        if cache.is_dir() and not cache.is_symlink():
            shutil.rmtree(cache, ignore_errors=True)


def _usage_fields(line: str) -> dict[str, Any]:
    """The token counts in the ``usage=Usage(...)`` part of a printed response."""
    start = line.rfind("usage=Usage(")
    numbers = {key: int(value) for key, value in _FIELD.findall(line[start:])} if start >= 0 else {}
    return {
        "prompt_tokens": numbers.get("prompt_tokens", 0),
        "completion_tokens": numbers.get("completion_tokens", 0),
        "prompt_tokens_details": {"cached_tokens": numbers.get("cached_tokens", 0)},
        "completion_tokens_details": {"reasoning_tokens": numbers.get("reasoning_tokens", 0)},
        "cache_creation_input_tokens": numbers.get("cache_creation_input_tokens", 0),
        "cache_read_input_tokens": numbers.get("cache_read_input_tokens", 0),
    }


def _content(line: str) -> str:
    match = _CONTENT.search(line)
    if not match:
        return ""
    try:
        value = ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError):
        return ""
    return value if isinstance(value, str) else ""


def _prefix(model: str | None) -> str | None:
    if model and "/" in model:
        return model.split("/", 1)[0]
    return None
