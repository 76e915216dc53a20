"""goose (``goose run``), headless. UNTESTED against a live CLI.

goose ships only as a release binary and could not be installed here; this adapter follows the
documented ``--output-format stream-json`` format and is tested on recorded samples written from
that documentation. The prompt goes by file (``--instructions FILE``).

Permission mode: ``GOOSE_MODE=auto`` (goose's other modes ask, and nobody answers). Its config,
data and sessions live under the trial's private ``GOOSE_PATH_ROOT``; session naming (an extra
model call) is switched off. Usage is reported once, for the whole run, in the final
``complete`` event, so the transcript holds one aggregate call; goose releases before the 2026
fix reported only the last turn there. An endpoint is used through goose's OpenAI provider
(``OPENAI_HOST`` and ``OPENAI_BASE_PATH``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.cli_run import CliRun, Collected, Launch
from harnessdrive.harnesses.cli.flags import FlagTable
from harnessdrive.harnesses.cli.message_blocks import exit_code
from harnessdrive.harnesses.cli.recording import (
    SessionLogError,
    TranscriptBuilder,
    as_int,
    json_lines,
    mapping,
)
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Transcript, Usage

FLAGS = FlagTable(
    {
        "instructions": "--instructions",
        "output_format": "--output-format",
        "name": "--name",
        "provider": "--provider",
        "model": "--model",
        "max_turns": "--max-turns",
    }
)
SHELL_TOOLS = frozenset({"developer__shell", "shell"})
EDITOR_TOOLS = frozenset({"developer__text_editor", "text_editor"})
_WRITING_COMMANDS = frozenset({"write", "str_replace", "insert", "undo_edit"})


class Goose(AgentCli):
    name = "goose"
    instruction_files = (".goosehints",)
    executables = ("goose",)
    flags = FLAGS
    auth_env = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GOOSE_PROVIDER")
    login_hint = "sign in: run `{binary} configure`, or set the provider's API key variable"
    base_url_env = ("OPENAI_HOST", "https://api.openai.com")
    help_args = ("run", "--help")
    supports = "model, max_turns, endpoint (OpenAI provider); permissions: GOOSE_MODE=auto"
    untested = True

    def base_url_setting(self, variant: VariantSpec) -> tuple[str, str] | None:
        # OPENAI_HOST is read by goose's OpenAI provider only; another bypasses the proxy.
        chosen = os.environ.get("GOOSE_PROVIDER")
        return self.base_url_env if chosen == "openai" else None

    def launch(self, run: CliRun) -> Launch:
        root = run.home / ".goose"
        argv = [str(run.binary), "run", FLAGS["instructions"], str(run.prompt_file)]
        argv += [FLAGS["output_format"], "stream-json", FLAGS["name"], run.session_id]
        env = {
            "GOOSE_PATH_ROOT": str(root),
            "GOOSE_MODE": "auto",
            "GOOSE_DISABLE_KEYRING": "1",
            "GOOSE_TELEMETRY_ENABLED": "false",
            "GOOSE_DISABLE_SESSION_NAMING": "true",
        }
        if run.endpoint is not None:
            parts = urlsplit(run.endpoint.url)
            env["OPENAI_HOST"] = f"{parts.scheme}://{parts.netloc}"
            env["OPENAI_BASE_PATH"] = parts.path.strip("/") + "/chat/completions"
            env["OPENAI_API_KEY"] = run.endpoint.api_key
            argv += [FLAGS["provider"], "openai"]
        if run.variant.model:
            argv += [FLAGS["model"], run.variant.model]
        if run.options.max_turns is not None:
            argv += [FLAGS["max_turns"], str(run.options.max_turns)]
        return Launch(argv=argv, env=env)

    def collect(self, run: CliRun, stdout: str, result: ProcessResult) -> Collected:
        transcript = parse_stream(
            stdout, run.workspace, run.variant.model, self.model_provider(run, None)
        )
        completed = any(e.get("type") == "complete" for e in json_lines(stdout))
        if not completed and result.exit_code == 0:
            raise SessionLogError("the stream never reached its 'complete' event")
        return Collected(transcript.model_copy(update={"session_id": run.session_id}))


def parse_stream(
    stdout: str, workspace: Path | None, model: str | None, provider: str | None
) -> Transcript:
    """A Transcript from ``goose run --output-format stream-json`` output."""
    builder = TranscriptBuilder(workspace)
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    final = None
    complete: dict[str, Any] = {}
    for event in json_lines(stdout):
        kind = event.get("type")
        if kind == "message" and isinstance(event.get("message"), dict):
            final = _message(event["message"], builder, calls) or final
        elif kind == "error":
            builder.error(str(event.get("error") or event.get("message") or "error"))
        elif kind == "complete":
            complete = event
    if complete:
        total = as_int(complete.get("total_tokens"))
        input_tokens = as_int(complete.get("input_tokens"))
        output_tokens = as_int(complete.get("output_tokens")) or max(total - input_tokens, 0)
        builder.call(
            str(complete.get("model") or model or ""),
            Usage(input=input_tokens, output=output_tokens),
            provider,
        )
    return builder.build(final_message=final)


def _message(
    message: dict[str, Any],
    builder: TranscriptBuilder,
    calls: dict[str, tuple[str, dict[str, Any]]],
) -> str | None:
    text = None
    for item in message.get("content") or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "text" and message.get("role") == "assistant":
            text = str(item.get("text", ""))
            builder.message(text)
        elif kind == "toolRequest":
            call = mapping(item.get("toolCall"))
            value = mapping(call.get("value"))
            name = str(value.get("name", ""))
            arguments = mapping(value.get("arguments"))
            call_id = str(item.get("id", ""))
            calls[call_id] = (name, arguments)
            builder.tool_call(name, arguments, call_id)
        elif kind == "toolResponse":
            _tool_response(item, builder, calls)
    return text


def _tool_response(
    item: dict[str, Any],
    builder: TranscriptBuilder,
    calls: dict[str, tuple[str, dict[str, Any]]],
) -> None:
    call_id = str(item.get("id", ""))
    name, arguments = calls.get(call_id, ("", {}))
    outcome = mapping(item.get("toolResult"))
    is_error = outcome.get("status") != "success"
    value = outcome.get("value")
    parts = value if isinstance(value, list) else []
    output = "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    if is_error:
        output = str(outcome.get("error") or output)
    builder.tool_result(call_id, output, is_error=is_error, name=name)
    if name in SHELL_TOOLS and isinstance(arguments.get("command"), str):
        builder.command(arguments["command"], exit_code(output, is_error), output)
    elif (
        name in EDITOR_TOOLS
        and not is_error
        and arguments.get("command") in _WRITING_COMMANDS
        and isinstance(arguments.get("path"), str)
    ):
        builder.file_change(arguments["path"], str(arguments["command"]))
