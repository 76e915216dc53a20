"""Gemini CLI (``gemini``), headless, with the prompt on stdin and ``-o stream-json``.

Permission mode: ``auto_edit`` (file edits approved) plus a policy file that allows
``run_shell_command`` and denies the web tools. Gemini waits for an approval nobody can give when
a tool needs one, so every tool must be allowed or denied up front; a denied tool is not offered
to the model at all. Session log: we choose the session id; the chat file under
``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/`` must carry it. Records are rewritten as they
grow (the same id again), so the last version of each counts; each ``gemini`` record is one call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.cli_run import CliRun, Collected, Launch
from harnessdrive.harnesses.cli.fatal import FatalKind
from harnessdrive.harnesses.cli.flags import FlagTable
from harnessdrive.harnesses.cli.message_blocks import exit_code
from harnessdrive.harnesses.cli.recording import (
    SessionLogError,
    TranscriptBuilder,
    as_int,
    json_lines,
    logged_time,
    mapping,
    position_at,
    read_jsonl,
)
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.transcript.models import Usage

FLAGS = FlagTable(
    {
        "output_format": "--output-format",
        "model": "--model",
        "approval_mode": "--approval-mode",
        "policy": "--policy",
        "session_id": "--session-id",
    }
)
FILE_TOOLS = frozenset({"write_file", "replace", "edit"})
SHELL_TOOLS = frozenset({"run_shell_command"})
POLICY = """\
# Written by harnessdrive: nobody answers approval prompts in a headless run.
[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 100

[[rule]]
toolName = ["web_fetch", "google_web_search"]
decision = "deny"
priority = 100
"""


class GeminiCli(AgentCli):
    name = "gemini"
    instruction_files = ("GEMINI.md",)
    vendor = "google"
    executables = ("gemini",)
    flags = FLAGS
    protocol = "gemini"
    auth_env = (
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_APPLICATION_CREDENTIALS",
    )
    login_files = (
        (".gemini/oauth_creds.json", ".gemini/oauth_creds.json"),
        (".gemini/google_accounts.json", ".gemini/google_accounts.json"),
    )
    login_hint = (
        "sign in: set GEMINI_API_KEY, or run `{binary}` and sign in with Google, then give the "
        "variant the option login = true"
    )
    exit_kinds: ClassVar[dict[int, FatalKind]] = {41: "login"}
    base_url_env = ("GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com")
    supports = "model, max_turns, endpoint (Gemini API); permissions: auto_edit + shell allowed"

    def sets_max_turns(self) -> bool:
        return True

    def launch(self, run: CliRun) -> Launch:
        folder = gemini_dir(run)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(_settings(run), indent=2))
        policy = folder / "harnessdrive-policy.toml"
        policy.write_text(POLICY, encoding="utf-8")
        argv = [str(run.binary), FLAGS["output_format"], "stream-json"]
        if run.full_permissions:
            argv += [FLAGS["approval_mode"], "yolo"]
        else:
            argv += [FLAGS["approval_mode"], "auto_edit", FLAGS["policy"], str(policy)]
        argv += [FLAGS["session_id"], run.session_id]
        if run.variant.model:
            argv += [FLAGS["model"], run.variant.model]
        env = {"GEMINI_CLI_HOME": str(run.home), "GEMINI_CLI_TRUST_WORKSPACE": "true"}
        if run.endpoint is not None:
            env["GOOGLE_GEMINI_BASE_URL"] = run.endpoint.url
            env["GEMINI_API_KEY"] = run.endpoint.api_key
        return Launch(argv=argv, env=env, stdin=run.prompt_file)

    def collect(self, run: CliRun, stdout: str, result: ProcessResult) -> Collected:
        stream = json_lines(stdout)
        builder = TranscriptBuilder(run.workspace)
        outcome, answers = _read_stream(stream, builder)
        try:
            log = chat_file(run)
        except SessionLogError:
            if result.exit_code == 0:
                raise
            return Collected(builder.build(session_id=run.session_id))
        side_logs = subagent_chat_files(log, run.session_id)
        provider = self.model_provider(run, "google")
        main_events = list(builder.events)
        for number, chat in enumerate((log, *side_logs)):
            records = [
                record
                for record in _final_records(chat)
                if record.get("type") == "gemini" and isinstance(record.get("tokens"), dict)
            ]
            # The main chat's answers begin where the stream's do, when both count the same;
            # a subagent's fall where their time puts them.
            starts = answers if number == 0 and len(answers) == len(records) else None
            for index, record in enumerate(records):
                model = str(record.get("model") or run.variant.model or "")
                stamp = logged_time(record.get("timestamp"))
                at: int | None = None
                if starts is not None:
                    at = starts[index]
                elif number > 0:
                    at = position_at(main_events, stamp)
                builder.call(model, _usage(record["tokens"]), provider, time=stamp, position=at)
        return Collected(
            builder.build(session_id=run.session_id, final_message=outcome),
            session_log=log,
            extra_logs=side_logs,
        )


def gemini_dir(run: CliRun) -> Path:
    return run.home / ".gemini"


def chat_file(run: CliRun) -> Path:
    """The chat file whose header carries this run's session id."""
    for path in sorted(gemini_dir(run).glob("tmp/*/chats/session-*.jsonl")):
        header = read_jsonl(path)[:1]
        if header and header[0].get("sessionId") == run.session_id:
            return path
    raise SessionLogError(f"no chat file for session {run.session_id} under {gemini_dir(run)}")


def subagent_chat_files(log: Path, session_id: str) -> tuple[Path, ...]:
    """The chat files of the session's subagents, and of theirs, each on its own model.

    Gemini CLI writes a subagent's chat to ``chats/<parent session id>/<its session id>.jsonl``
    and leaves it out of the parent's file, so its calls are billed only if read from there.
    """
    found: list[Path] = []
    parents = [session_id]
    while parents:
        folder = log.parent / parents.pop(0)
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else ():
            header = read_jsonl(path)[:1]
            if header and header[0].get("kind") == "subagent" and path not in found:
                found.append(path)
                parents.append(path.stem)
    return tuple(found)


def _final_records(chat: Path) -> list[dict[str, Any]]:
    """A chat file's records in their last written form (a record is rewritten as it grows)."""
    records: dict[str, dict[str, Any]] = {}
    for line in read_jsonl(chat)[1:]:
        if "id" in line and "type" in line:
            records[str(line["id"])] = line
    return list(records.values())


def _settings(run: CliRun) -> dict[str, Any]:
    auth = "oauth-personal" if run.options.login else "gemini-api-key"
    settings: dict[str, Any] = {
        "security": {"auth": {"selectedType": auth}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    if run.options.max_turns is not None:
        settings["model"] = {"maxSessionTurns": run.options.max_turns}
    return settings


def _read_stream(
    stream: list[dict[str, Any]], builder: TranscriptBuilder
) -> tuple[str | None, list[int]]:
    """Events from ``-o stream-json``; returns the final answer and where each answer of the
    model begins (its text or tool calls after anything else)."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    text: list[str] = []
    text_time: list[str | None] = []
    answer = None
    answers: list[int] = []
    answering = False

    def flush() -> None:
        nonlocal answer
        if text:
            answer = "".join(text)
            with builder.timed(text_time[0]):
                builder.message(answer)
            text.clear()
            text_time.clear()

    for event in stream:
        kind = event.get("type")
        stamp = logged_time(event.get("timestamp"))
        said = kind == "message" and event.get("role") == "assistant"
        if (said or kind == "tool_use") and not answering:
            answers.append(builder.mark())
        answering = said or kind == "tool_use"
        if said:
            text.append(str(event.get("content", "")))
            text_time.append(stamp)
            continue
        flush()
        with builder.timed(stamp):
            _stream_event(event, calls, builder)
    flush()
    return answer, answers


def _stream_event(
    event: dict[str, Any],
    calls: dict[str, tuple[str, dict[str, Any]]],
    builder: TranscriptBuilder,
) -> None:
    kind = event.get("type")
    if kind == "tool_use":
        name = str(event.get("tool_name", ""))
        arguments = mapping(event.get("parameters"))
        call_id = str(event.get("tool_id", ""))
        calls[call_id] = (name, arguments)
        builder.tool_call(name, arguments, call_id)
    elif kind == "tool_result":
        _tool_result(event, calls, builder)
    elif kind == "error":
        builder.error(str(event.get("message", "")), severity=event.get("severity"))
    elif kind == "result" and event.get("status") not in (None, "success"):
        error = mapping(event.get("error"))
        builder.error(str(error.get("message") or f"run ended: {event.get('status')}"))


def _tool_result(
    event: dict[str, Any],
    calls: dict[str, tuple[str, dict[str, Any]]],
    builder: TranscriptBuilder,
) -> None:
    call_id = str(event.get("tool_id", ""))
    name, arguments = calls.get(call_id, ("", {}))
    is_error = event.get("status") != "success"
    output = str(event.get("output", ""))
    if is_error and isinstance(event.get("error"), dict):
        output = str(event["error"].get("message", output))
    builder.tool_result(call_id, output, is_error=is_error, name=name)
    if name in SHELL_TOOLS and isinstance(arguments.get("command"), str):
        builder.command(arguments["command"], exit_code(output, is_error), output)
    elif name in FILE_TOOLS and not is_error and isinstance(arguments.get("file_path"), str):
        builder.file_change(arguments["file_path"], name)


def _usage(tokens: dict[str, Any]) -> Usage:
    """Gemini's ``input`` is the whole prompt (cached included); ``output`` leaves out thoughts."""
    prompt = as_int(tokens.get("input"))
    cached = as_int(tokens.get("cached"))
    thoughts = as_int(tokens.get("thoughts"))
    # Tokens of tool-use prompts are counted apart from the prompt and billed as input.
    return Usage(
        input=max(prompt - cached, 0) + as_int(tokens.get("tool")),
        cache_read=cached,
        output=as_int(tokens.get("output")) + thoughts,
        reasoning=thoughts,
    )
