"""Qwen Code (``qwen``), headless, with the prompt on stdin and ``-o stream-json``.

Permission mode: ``auto-edit`` (file edits approved) plus ``run_shell_command`` allowed; other
tools that would ask are denied and counted in the result's ``permission_denials``. Session log:
we choose the session id, so the chat file is ``$QWEN_HOME/projects/<cwd slug>/chats/<id>.jsonl``;
each ``assistant`` record carrying ``usageMetadata`` is one model call, attributed to the model
the API reported (from the ``api_response`` record it follows). The stream follows Claude Code's
shape, so its events are read the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.cli_run import CliRun, Collected, Launch
from harnessdrive.harnesses.cli.flags import FlagTable
from harnessdrive.harnesses.cli.message_blocks import BlockReader, ToolKinds
from harnessdrive.harnesses.cli.recording import (
    SessionLogError,
    TranscriptBuilder,
    as_int,
    json_lines,
    logged_time,
    mapping,
    read_jsonl,
)
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.transcript.models import Usage

FLAGS = FlagTable(
    {
        "output_format": "--output-format",
        "model": "--model",
        "approval_mode": "--approval-mode",
        "allowed_tools": "--allowed-tools",
        "auth_type": "--auth-type",
        "base_url": "--openai-base-url",
        "session_id": "--session-id",
        "max_turns": "--max-session-turns",
    }
)
TOOLS = ToolKinds(
    file_tools=frozenset({"write_file", "edit", "replace"}),
    shell_tools=frozenset({"run_shell_command"}),
)


class QwenCode(AgentCli):
    name = "qwen"
    instruction_files = ("QWEN.md",)
    executables = ("qwen",)
    flags = FLAGS
    protocol = "openai"
    auth_env = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "DASHSCOPE_API_KEY")
    login_files = ((".qwen/oauth_creds.json", ".qwen/oauth_creds.json"),)
    login_hint = (
        "sign in: set OPENAI_API_KEY (and OPENAI_BASE_URL), or run `{binary}` and sign in, "
        "then give the variant the option login = true"
    )
    supports = (
        "model, max_turns, endpoint (Chat Completions); permissions: auto-edit + shell allowed"
    )

    def launch(self, run: CliRun) -> Launch:
        argv = [str(run.binary), FLAGS["output_format"], "stream-json"]
        if run.full_permissions:
            argv += [FLAGS["approval_mode"], "yolo"]
        else:
            argv += [FLAGS["approval_mode"], "auto-edit"]
            argv += [FLAGS["allowed_tools"], "run_shell_command"]
        argv += [FLAGS["session_id"], run.session_id]
        env = {
            "QWEN_HOME": str(qwen_home(run)),
            "QWEN_TELEMETRY_ENABLED": "false",
            "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
        }
        if run.endpoint is not None:
            argv += [FLAGS["auth_type"], "openai", FLAGS["base_url"], run.endpoint.url]
            env["OPENAI_API_KEY"] = run.endpoint.api_key
        if run.variant.model:
            argv += [FLAGS["model"], run.variant.model]
        if run.options.max_turns is not None:
            argv += [FLAGS["max_turns"], str(run.options.max_turns)]
        return Launch(argv=argv, env=env, stdin=run.prompt_file)

    def collect(self, run: CliRun, stdout: str, result: ProcessResult) -> Collected:
        stream = json_lines(stdout)
        builder = TranscriptBuilder(run.workspace)
        reader = BlockReader(builder, TOOLS)
        outcome: dict[str, Any] = {}
        answers: list[int] = []
        """Where each answer of the model begins: its first assistant message after anything
        else (Qwen streams one message per content block)."""
        answering = False
        for event in stream:
            message = event.get("message") if isinstance(event.get("message"), dict) else None
            said = event.get("type") == "assistant" and message is not None
            if said and not answering:
                answers.append(builder.mark())
            if event.get("type") in ("assistant", "user"):
                answering = said
            if said and message is not None:
                reader.assistant(message)
            elif event.get("type") == "user" and message is not None:
                reader.user(message)
            elif event.get("type") == "result":
                outcome = event
        streamed = builder.mark()
        error = None
        if outcome.get("is_error"):
            error = str(outcome.get("error") or outcome.get("result") or "the run failed")
            builder.error(error, subtype=outcome.get("subtype"))
        denials = outcome.get("permission_denials")
        for denial in denials if isinstance(denials, list) else []:
            builder.denial(str(denial.get("tool_name", "")) if isinstance(denial, dict) else "")
        try:
            log = chat_file(run)
        except SessionLogError:
            if result.exit_code == 0:
                raise
            return Collected(builder.build(session_id=run.session_id, error=error))
        provider = self.model_provider(run, None)
        lines = read_jsonl(log)
        for line in lines:
            if line.get("sessionId") not in (None, run.session_id):
                raise SessionLogError(f"{log.name} holds lines of session {line['sessionId']}")
        found = model_calls(lines, run.variant.model or "")
        times = answer_times(lines)
        # The chat file's answers are the stream's, in order, when both count the same.
        starts = answers if len(answers) == len(found) == len(times) else None
        for index, (model, usage) in enumerate(found):
            builder.call(
                model,
                usage,
                provider,
                time=times[index] if starts is not None else None,
                position=starts[index] if starts is not None else None,
            )
        if starts is not None:
            _stamp(builder, [*starts, streamed], times, result_times(lines))
        return Collected(
            builder.build(
                session_id=run.session_id,
                turns=as_int(outcome["num_turns"]) if "num_turns" in outcome else None,
                final_message=str(outcome["result"]) if "result" in outcome and not error else None,
                error=error,
            ),
            session_log=log,
        )


def qwen_home(run: CliRun) -> Path:
    return run.home / ".qwen"


def chat_file(run: CliRun) -> Path:
    found = sorted(qwen_home(run).glob(f"projects/*/chats/{run.session_id}.jsonl"))
    if not found:
        raise SessionLogError(f"no chat file for session {run.session_id} under {qwen_home(run)}")
    return found[0]


def model_calls(lines: list[dict[str, Any]], requested: str) -> list[tuple[str, Usage]]:
    """Each ``assistant`` record with usage, as (model, usage).

    The record's own ``model`` is the one Qwen asked for. The model the API reported is in the
    ``api_response`` telemetry record just before it, which the assistant record names as its
    ``parentUuid``; that one is used when present.
    """
    answered = {
        str(line["uuid"]): str(event["model"])
        for line in lines
        if line.get("type") == "system" and "uuid" in line
        for event in [mapping(mapping(line.get("systemPayload")).get("uiEvent"))]
        if event.get("event.name") == "qwen-code.api_response" and event.get("model")
    }
    calls = []
    for line in lines:
        metadata = line.get("usageMetadata")
        if line.get("type") == "assistant" and isinstance(metadata, dict):
            model = answered.get(str(line.get("parentUuid"))) or line.get("model") or requested
            calls.append((str(model), _usage(metadata)))
    return calls


def answer_times(lines: list[dict[str, Any]]) -> list[str | None]:
    """The time of each ``assistant`` record with usage (one model call), in order."""
    return [
        logged_time(line.get("timestamp"))
        for line in lines
        if line.get("type") == "assistant" and isinstance(line.get("usageMetadata"), dict)
    ]


def result_times(lines: list[dict[str, Any]]) -> dict[str, str]:
    """The time each tool result was logged, by its call id."""
    found: dict[str, str] = {}
    for line in lines:
        if line.get("type") != "tool_result" or not (stamp := logged_time(line.get("timestamp"))):
            continue
        for part in mapping(line.get("message")).get("parts") or []:
            response = mapping(mapping(part).get("functionResponse"))
            if response.get("id"):
                found[str(response["id"])] = stamp
    return found


def _stamp(
    builder: TranscriptBuilder,
    bounds: list[int],
    times: list[str | None],
    results: dict[str, str],
) -> None:
    """The stream has no times: an answer's events (``bounds``: where each begins, then the
    stream's end) take its record's, a tool result (and the command or file change it made)
    the time its record was logged."""
    for index, time in enumerate(times):
        answer_end = next(
            (
                i
                for i in range(bounds[index], bounds[index + 1])
                if builder.events[i].kind == "tool_result"
            ),
            bounds[index + 1],
        )
        builder.stamp(bounds[index], answer_end, time)
    for index, event in enumerate(builder.events[: bounds[-1]]):
        if event.kind == "tool_result" and str(event.data.get("id", "")) in results:
            end = index + 1
            while end < bounds[-1] and builder.events[end].kind in (
                "command",
                "file_change",
            ):
                end += 1
            builder.stamp(index, end, results[str(event.data["id"])])


def _usage(metadata: dict[str, Any]) -> Usage:
    """Qwen records Gemini-style counts: the prompt includes cached tokens, and the candidates
    include the thoughts (it copies OpenAI's completion count)."""
    prompt = as_int(metadata.get("promptTokenCount"))
    cached = as_int(metadata.get("cachedContentTokenCount"))
    return Usage(
        input=max(prompt - cached, 0),
        cache_read=cached,
        output=as_int(metadata.get("candidatesTokenCount")),
        reasoning=as_int(metadata.get("thoughtsTokenCount")),
    )
