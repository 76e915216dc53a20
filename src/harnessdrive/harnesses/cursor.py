"""Cursor CLI (``cursor-agent``), headless. UNTESTED against a live CLI.

Cursor CLI installs only through its own download script, so it could not be run here; this
adapter follows the documented ``-p --output-format stream-json`` format and is tested on recorded
samples written from that documentation. It cannot be pointed at another model server (Cursor
has no base-URL setting), so it has no ``endpoint`` option and runs only with a Cursor account
(``CURSOR_API_KEY``).

Permission mode: ``--force`` (print mode makes no file changes without it). The prompt goes on
the command line: no documented way to read it from stdin or a file. Usage is reported once, for
the whole run, in the final ``result`` (camelCase), so the transcript holds one aggregate call.
There is no documented session file; the run is bound to the session id of its own stream (the
``init`` and ``result`` events must agree).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harnessdrive.errors import UserError
from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.cli_run import CliRun, Collected, Launch
from harnessdrive.harnesses.cli.flags import FlagTable
from harnessdrive.harnesses.cli.message_blocks import BlockReader, ToolKinds, exit_code
from harnessdrive.harnesses.cli.options import CliOptions
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
        "print": "--print",
        "output_format": "--output-format",
        "force": "--force",
        "model": "--model",
        "workspace": "--workspace",
    }
)
TOOLS = ToolKinds(
    file_tools=frozenset({"edit", "write", "edit_file", "write_file"}),
    shell_tools=frozenset({"shell", "run_terminal_cmd", "terminal"}),
)


class CursorCli(AgentCli):
    name = "cursor"
    instruction_files = ("AGENTS.md",)
    executables = ("cursor-agent",)
    flags = FLAGS
    auth_env = ("CURSOR_API_KEY",)
    login_files = ((".cursor/cli-config.json", ".cursor/cli-config.json"),)
    login_hint = "sign in: set CURSOR_API_KEY, or run `{binary} login`"
    supports = "model; no endpoint (Cursor's servers only); permissions: --force"
    untested = True

    def check_options(self, variant: VariantSpec, options: CliOptions) -> None:
        if options.endpoint is not None:
            raise UserError(
                f"variant {variant.label}: Cursor CLI has no setting for another model server"
            )

    def launch(self, run: CliRun) -> Launch:
        argv = [str(run.binary), FLAGS["print"], FLAGS["output_format"], "stream-json"]
        argv += [FLAGS["force"], FLAGS["workspace"], str(run.workspace)]
        if run.variant.model:
            argv += [FLAGS["model"], run.variant.model]
        argv.append(run.prompt_file.read_text(encoding="utf-8"))
        return Launch(argv=argv)

    def collect(self, run: CliRun, stdout: str, result: ProcessResult) -> Collected:
        transcript = parse_stream(stdout, run.workspace, run.variant.model)
        if transcript.session_id is None and result.exit_code == 0:
            raise SessionLogError("the stream named no session")
        return Collected(transcript)


def parse_stream(stdout: str, workspace: Path | None, model: str | None) -> Transcript:
    """A Transcript from ``cursor-agent -p --output-format stream-json`` output."""
    stream = json_lines(stdout)
    builder = TranscriptBuilder(workspace)
    reader = BlockReader(builder, TOOLS)
    sessions = {str(e["session_id"]) for e in stream if e.get("session_id")}
    if len(sessions) > 1:
        raise SessionLogError(f"the stream names several sessions: {sorted(sessions)}")
    init = next((e for e in stream if e.get("type") == "system"), {})
    outcome: dict[str, Any] = {}
    for event in stream:
        kind = event.get("type")
        message = event.get("message") if isinstance(event.get("message"), dict) else None
        if kind == "assistant" and message is not None:
            reader.assistant(message)
        elif kind == "tool_call" and event.get("subtype") == "completed":
            _tool_call(event, builder)
        elif kind == "result":
            outcome = event
    error = None
    if outcome.get("is_error"):
        error = str(outcome.get("result") or outcome.get("subtype") or "the run failed")
        builder.error(error)
    usage = outcome.get("usage")
    if isinstance(usage, dict):
        # Assumed in disjoint tiers, as Claude-shaped usage is; unverified.
        builder.call(
            str(init.get("model") or model or ""),
            Usage(
                input=as_int(usage.get("inputTokens")),
                cache_read=as_int(usage.get("cacheReadTokens")),
                cache_write=as_int(usage.get("cacheWriteTokens")),
                output=as_int(usage.get("outputTokens")),
            ),
            "cursor",
        )
    return builder.build(
        session_id=sessions.pop() if sessions else None,
        final_message=str(outcome["result"]) if "result" in outcome and not error else None,
        error=error,
    )


def _tool_call(event: dict[str, Any], builder: TranscriptBuilder) -> None:
    """``{"type": "tool_call", "tool_call": {"shellToolCall": {"args": ..., "result": ...}}}``."""
    wrapper = mapping(event.get("tool_call"))
    for key, body in wrapper.items():
        if not isinstance(body, dict):
            continue
        name = key.removesuffix("ToolCall")
        arguments = mapping(body.get("args"))
        outcome = mapping(body.get("result"))
        success = outcome.get("success") if isinstance(outcome.get("success"), dict) else None
        failure = outcome.get("error") or outcome.get("failure")
        call_id = str(event.get("call_id", ""))
        builder.tool_call(name, arguments, call_id)
        output = success if success is not None else failure
        builder.tool_result(call_id, output, is_error=success is None, name=name)
        if name in TOOLS.shell_tools and isinstance(arguments.get("command"), str):
            code = success.get("exitCode") if success is not None else None
            text = str(output or "")
            builder.command(
                arguments["command"],
                code if isinstance(code, int) else exit_code(text, success is None),
                success.get("stdout") if success is not None else text,
            )
        elif name in TOOLS.file_tools and success is not None:
            path = arguments.get("path") or arguments.get("file_path")
            if isinstance(path, str):
                builder.file_change(path, name)
