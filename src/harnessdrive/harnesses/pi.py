"""pi coding agent (``pi -p --mode json``), with the prompt on stdin.

Permission mode: pi has no permission prompts; its four default tools (read, bash, edit, write)
run as asked, so the trial's sandbox is its only boundary. Session log: the only session file in
the ``--session-dir`` we give it, whose header must carry the id the JSON stream announced. Each
assistant message there is one model call. pi folds reasoning tokens into ``output`` and keeps no
separate count, so the reasoning share is unknown (recorded as 0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.cli_run import CliRun, Collected, Launch
from harnessdrive.harnesses.cli.flags import FlagTable
from harnessdrive.harnesses.cli.message_blocks import exit_code
from harnessdrive.harnesses.cli.recording import (
    SessionLogError,
    TranscriptBuilder,
    as_int,
    json_lines,
    logged_time,
    mapping,
    only_file,
    read_jsonl,
)
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.transcript.models import Usage

FLAGS = FlagTable(
    {
        "print": "--print",
        "mode": "--mode",
        "provider": "--provider",
        "model": "--model",
        "thinking": "--thinking",
        "session_dir": "--session-dir",
    }
)
PROVIDER_ID = "harnessdrive"
FILE_TOOLS = frozenset({"write", "edit"})


class Pi(AgentCli):
    name = "pi"
    instruction_files = ("AGENTS.md",)
    executables = ("pi",)
    flags = FLAGS
    protocol = "openai"
    efforts = ("off", "minimal", "low", "medium", "high", "xhigh")
    auth_env = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY")
    login_files = ((".pi/agent/auth.json", ".pi/agent/auth.json"),)
    login_hint = (
        "sign in: set the provider's API key variable, or run `{binary}` and /login, then give "
        "the variant the option login = true"
    )
    supports = (
        "model (provider/id), effort (--thinking off..xhigh), endpoint (Chat Completions); "
        "no permission system"
    )

    def launch(self, run: CliRun) -> Launch:
        agent_dir = run.home / ".pi" / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        argv = [str(run.binary), FLAGS["print"], FLAGS["mode"], "json"]
        argv += [FLAGS["session_dir"], str(session_dir(run))]
        if run.endpoint is not None:
            model = run.variant.model or "default"
            (agent_dir / "models.json").write_text(json.dumps(_models(run, model), indent=2))
            argv += [FLAGS["provider"], PROVIDER_ID, FLAGS["model"], model]
        elif run.variant.model:
            argv += [FLAGS["model"], run.variant.model]
        if run.variant.effort:
            argv += [FLAGS["thinking"], run.variant.effort]
        env = {"PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1", "PI_TELEMETRY": "0"}
        return Launch(argv=argv, env=env, stdin=run.prompt_file)

    def collect(self, run: CliRun, stdout: str, result: ProcessResult) -> Collected:
        stream = json_lines(stdout)
        announced = next((str(e["id"]) for e in stream if e.get("type") == "session"), None)
        builder = TranscriptBuilder(run.workspace)
        try:
            log = only_file(session_dir(run).glob("*.jsonl"), "pi session file")
        except SessionLogError:
            if result.exit_code == 0:
                raise
            for event in stream:
                if event.get("type") == "error" or event.get("errorMessage"):
                    builder.error(str(event.get("errorMessage") or event.get("message") or ""))
            return Collected(builder.build(session_id=announced))
        lines = read_jsonl(log)
        owner = str(lines[0].get("id", "")) if lines else ""
        if announced is not None and owner != announced:
            raise SessionLogError(f"{log.name} belongs to session {owner!r}, not {announced!r}")
        final, cost = _read_messages(lines, builder, self.model_provider, run)
        for event in stream:
            if event.get("type") == "auto_retry_start":
                reason = str(event.get("errorMessage") or "retry")
                builder.retry(reason, attempt=event.get("attempt"))
            elif event.get("type") == "compaction_end" and not event.get("aborted"):
                builder.compaction(str(event.get("reason") or "threshold"))
        return Collected(
            builder.build(
                session_id=owner,
                final_message=final,
                reported_cost_usd=cost if run.endpoint is None else None,
            ),
            session_log=log,
        )


def session_dir(run: CliRun) -> Path:
    return run.home / ".pi" / "sessions"


def _models(run: CliRun, model: str) -> dict[str, Any]:
    assert run.endpoint is not None
    thinking = bool(run.variant.effort)
    return {
        "providers": {
            PROVIDER_ID: {
                "baseUrl": run.endpoint.url,
                "api": "openai-completions",
                "apiKey": run.endpoint.api_key,
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": thinking},
                "models": [{"id": model, "reasoning": thinking}],
            }
        }
    }


def _read_messages(
    lines: list[dict[str, Any]],
    builder: TranscriptBuilder,
    provider_of: Any,
    run: CliRun,
) -> tuple[str | None, float | None]:
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    final = None
    cost = 0.0
    costed = False
    for line in lines:
        message = line.get("message") if line.get("type") == "message" else None
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        stamp = logged_time(line.get("timestamp"))
        if role == "assistant":
            start = builder.mark()
            with builder.timed(stamp):
                text = _assistant(message, builder, calls)
            final = text or final
            usage = message.get("usage") if isinstance(message.get("usage"), dict) else None
            if usage is not None:
                provider = provider_of(run, str(message.get("provider") or "") or None)
                model = reported_model(message)
                builder.call(model, _usage(usage), provider, time=stamp, position=start)
                total = (usage.get("cost") or {}).get("total")
                if isinstance(total, int | float):
                    cost += float(total)
                    costed = True
            if message.get("stopReason") == "error" or message.get("errorMessage"):
                with builder.timed(stamp):
                    builder.error(str(message.get("errorMessage") or "model call failed"))
        elif role == "toolResult":
            with builder.timed(stamp):
                _tool_result(message, builder, calls)
    return final, (round(cost, 10) if costed else None)


def reported_model(message: dict[str, Any]) -> str:
    """The model that answered: pi keeps the id the API reported as ``responseModel`` (written
    when it differs from the requested ``model``)."""
    return str(message.get("responseModel") or message.get("model") or "")


def _assistant(
    message: dict[str, Any],
    builder: TranscriptBuilder,
    calls: dict[str, tuple[str, dict[str, Any]]],
) -> str | None:
    text = None
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            text = str(block.get("text", ""))
            builder.message(text)
        elif block.get("type") == "toolCall":
            name = str(block.get("name", ""))
            arguments = mapping(block.get("arguments"))
            call_id = str(block.get("id", ""))
            calls[call_id] = (name, arguments)
            builder.tool_call(name, arguments, call_id)
    return text


def _tool_result(
    message: dict[str, Any],
    builder: TranscriptBuilder,
    calls: dict[str, tuple[str, dict[str, Any]]],
) -> None:
    call_id = str(message.get("toolCallId", ""))
    name, arguments = calls.get(call_id, (str(message.get("toolName", "")), {}))
    parts = [b.get("text", "") for b in message.get("content") or [] if isinstance(b, dict)]
    output = "\n".join(str(p) for p in parts if p)
    is_error = bool(message.get("isError"))
    builder.tool_result(call_id, output, is_error=is_error, name=name)
    if name == "bash" and isinstance(arguments.get("command"), str):
        builder.command(arguments["command"], exit_code(output, is_error), output)
    elif name in FILE_TOOLS and not is_error and isinstance(arguments.get("path"), str):
        builder.file_change(arguments["path"], name)


def _usage(usage: dict[str, Any]) -> Usage:
    """pi's ``input`` leaves out cache reads and writes; ``output`` includes reasoning."""
    return Usage(
        input=as_int(usage.get("input")),
        cache_read=as_int(usage.get("cacheRead")),
        cache_write=as_int(usage.get("cacheWrite")),
        output=as_int(usage.get("output")),
    )
