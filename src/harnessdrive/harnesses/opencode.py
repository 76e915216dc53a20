"""opencode (``opencode run``), headless, with the prompt on stdin and ``--format json``.

Permission mode: a config ``permission`` block allowing edits and bash and denying web fetches
and paths outside the workspace (``--auto`` is not passed). A session title is given, which
spares the extra model call opencode makes to invent one. Session log: opencode keeps sessions
in SQLite under the trial's private ``XDG_DATA_HOME``; the session named on stdout is read from
there (its directory must be the workspace) with the sessions of its subagents, and exported as
JSON into the trial folder. Each assistant message, a subagent's included, is one model call with
its tokens and cost.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.cli_run import CliRun, Collected, Launch
from harnessdrive.harnesses.cli.flags import FlagTable
from harnessdrive.harnesses.cli.recording import (
    SessionLogError,
    TranscriptBuilder,
    as_int,
    json_lines,
    logged_time,
    mapping,
    position_at,
)
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.transcript.models import Usage

FLAGS = FlagTable(
    {
        "format": "--format",
        "model": "--model",
        "variant": "--variant",
        "pure": "--pure",
        "title": "--title",
        "auto": "--auto",
    }
)
PROVIDER_ID = "harnessdrive"
TITLE = "harnessdrive trial"
FILE_TOOLS = frozenset({"write", "edit", "patch", "multiedit"})
LEAST_PERMISSIONS = {
    "edit": "allow",
    "bash": "allow",
    "webfetch": "deny",
    "external_directory": "deny",
}
_QUIET = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
}


class OpenCode(AgentCli):
    name = "opencode"
    instruction_files = ("AGENTS.md",)
    executables = ("opencode",)
    flags = FLAGS
    protocol = "openai"
    efforts = ("minimal", "low", "medium", "high", "xhigh", "max")
    auth_env = (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_GENERATIVE_AI_API_KEY",
        "OPENROUTER_API_KEY",
    )
    login_files = ((".local/share/opencode/auth.json", "data/opencode/auth.json"),)
    login_hint = (
        "sign in: set the provider's API key variable, or run `{binary} auth login`, then give "
        "the variant the option login = true"
    )
    help_args = ("run", "--help")
    supports = (
        "model (provider/model), effort (--variant, as the model defines it), endpoint "
        "(Chat Completions); permissions: edit + bash, no web fetch"
    )

    def launch(self, run: CliRun) -> Launch:
        config: dict[str, Any] = {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
        }
        if not run.full_permissions:
            config["permission"] = LEAST_PERMISSIONS
        model = run.variant.model
        if run.endpoint is not None:
            name = model or "default"
            config["provider"] = {
                PROVIDER_ID: {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": run.endpoint.provider,
                    "options": {"baseURL": run.endpoint.url, "apiKey": run.endpoint.api_key},
                    "models": {name: {"name": name}},
                }
            }
            model = f"{PROVIDER_ID}/{name}"
            config["model"] = model
        argv = [str(run.binary), "run", FLAGS["format"], "json", FLAGS["pure"]]
        argv += [FLAGS["title"], TITLE]
        if run.full_permissions:
            argv.append(FLAGS["auto"])
        if model:
            argv += [FLAGS["model"], model]
        if run.variant.effort:
            argv += [FLAGS["variant"], run.variant.effort]
        home = run.home
        env = {
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "XDG_STATE_HOME": str(home / "state"),
            "OPENCODE_CONFIG_CONTENT": json.dumps(config),
            **_QUIET,
        }
        return Launch(argv=argv, env=env, stdin=run.prompt_file)

    def collect(self, run: CliRun, stdout: str, result: ProcessResult) -> Collected:
        stream = json_lines(stdout)
        named = {str(e["sessionID"]) for e in stream if e.get("sessionID")}
        builder = TranscriptBuilder(run.workspace)
        for event in stream:
            if event.get("type") == "error":
                builder.error(_error_text(event.get("error")))
        if len(named) != 1:
            if result.exit_code != 0:
                return Collected(builder.build())
            raise SessionLogError(f"stdout names {len(named)} sessions, expected one")
        session_id = named.pop()
        path = run.request.logs / "session-opencode.json"
        if not database(run).is_file() and path.is_file():
            export = json.loads(path.read_text(encoding="utf-8"))  # a replay of the stored export
        else:
            export = export_session(run, session_id)
            path.write_text(json.dumps(export, indent=1), encoding="utf-8")
        starts: list[int] = []
        """Where each of the session's own assistant messages (one model call) begins."""
        for message in export["messages"]:
            info = message["info"]
            if info.get("role") != "assistant":
                continue
            starts.append(builder.mark())
            for part in message["parts"]:
                _part(part, builder)
            if isinstance(info.get("error"), dict):
                with builder.timed(_time(info, "completed")):
                    builder.error(_error_text(info["error"]))
        cost = 0.0
        costed = False
        main_events = list(builder.events)
        for index, info in enumerate(assistant_infos(export)):
            if isinstance(info.get("tokens"), dict):
                provider = self.model_provider(run, str(info.get("providerID") or "") or None)
                stamp = _time(info, "created")
                # A subagent's calls fall where their time puts them in the session's run.
                at = starts[index] if index < len(starts) else position_at(main_events, stamp)
                usage = _usage(info["tokens"])
                model = str(info.get("modelID") or "")
                builder.call(model, usage, provider, time=stamp, position=at)
            if isinstance(info.get("cost"), int | float):
                cost += float(info["cost"])
                costed = True
        final = next(
            (
                str(part.get("text"))
                for message in reversed(export["messages"])
                if message["info"].get("role") == "assistant"
                for part in reversed(message["parts"])
                if part.get("type") == "text"
            ),
            None,
        )
        return Collected(
            builder.build(
                session_id=session_id,
                final_message=final,
                # Under an endpoint we gave opencode no prices, so its figure would be a made-up 0.
                reported_cost_usd=round(cost, 10) if costed and run.endpoint is None else None,
            ),
            session_log=path,
        )


def database(run: CliRun) -> Path:
    return run.home / "data" / "opencode" / "opencode.db"


def export_session(run: CliRun, session_id: str) -> dict[str, Any]:
    """The session's row, messages and parts, read from opencode's database, with the sessions
    of its subagents (``subagents``, nested the same way)."""
    export = read_session(database(run), session_id)
    if Path(export["session"]["directory"]).resolve() != run.workspace.resolve():
        directory = export["session"]["directory"]
        raise SessionLogError(f"session {session_id} ran in {directory}, not the workspace")
    return export


def read_session(path: Path, session_id: str) -> dict[str, Any]:
    """One session of an opencode database, its subagents' sessions nested in it."""
    if not path.is_file():
        raise SessionLogError(f"no opencode database at {path}")
    with closing(sqlite3.connect(path)) as db:
        return _read_session(db, session_id, path.name)


def _read_session(db: sqlite3.Connection, session_id: str, where: str) -> dict[str, Any]:
    row = db.execute(
        "select id, directory, title from session where id = ?", (session_id,)
    ).fetchone()
    if row is None:
        raise SessionLogError(f"session {session_id} is not in {where}")
    messages = db.execute(
        "select id, data from message where session_id = ? order by time_created, id",
        (session_id,),
    ).fetchall()
    parts = db.execute(
        "select message_id, data from part where session_id = ? order by time_created, id",
        (session_id,),
    ).fetchall()
    # A subagent (the task tool) runs in a session of its own whose parent is this one.
    children = db.execute(
        "select id from session where parent_id = ? order by time_created, id", (session_id,)
    ).fetchall()
    by_message: dict[str, list[dict[str, Any]]] = {}
    for message_id, data in parts:
        by_message.setdefault(message_id, []).append(json.loads(data))
    return {
        "session": {"id": row[0], "directory": row[1], "title": row[2]},
        "messages": [
            {"id": message_id, "info": json.loads(data), "parts": by_message.get(message_id, [])}
            for message_id, data in messages
        ],
        "subagents": [_read_session(db, child, where) for (child,) in children],
    }


def assistant_infos(export: dict[str, Any]) -> list[dict[str, Any]]:
    """The info of every assistant message, one per model call: the session's, then each
    subagent's, so subagent calls are billed too."""
    infos = [
        message["info"]
        for message in export["messages"]
        if message["info"].get("role") == "assistant"
    ]
    for child in export.get("subagents", []):
        infos += assistant_infos(child)
    return infos


def _part(part: dict[str, Any], builder: TranscriptBuilder) -> None:
    kind = part.get("type")
    if kind == "text":
        with builder.timed(_time(part, "start")):
            builder.message(str(part.get("text", "")))
    elif kind == "tool":
        name = str(part.get("tool", ""))
        state = mapping(part.get("state"))
        arguments = mapping(state.get("input"))
        call_id = str(part.get("callID", ""))
        with builder.timed(_time(state, "start")):
            builder.tool_call(name, arguments, call_id)
        with builder.timed(_time(state, "end")):
            _tool_outcome(builder, name, state, arguments, call_id)


def _time(record: dict[str, Any], which: str) -> str | None:
    """opencode's ``time.<which>``: milliseconds since the epoch."""
    return logged_time(mapping(record.get("time")).get(which), epoch="ms")


def _tool_outcome(
    builder: TranscriptBuilder,
    name: str,
    state: dict[str, Any],
    arguments: dict[str, Any],
    call_id: str,
) -> None:
    is_error = state.get("status") == "error"
    output = state.get("error") if is_error else state.get("output")
    builder.tool_result(call_id, output, is_error=is_error, name=name)
    if isinstance(output, str) and "permission" in output.lower() and is_error:
        builder.denial(name)
    metadata = mapping(state.get("metadata"))
    if name == "bash" and isinstance(arguments.get("command"), str):
        exit_code = metadata.get("exit")
        builder.command(
            arguments["command"], exit_code if isinstance(exit_code, int) else None, output
        )
    elif name in FILE_TOOLS and not is_error and isinstance(arguments.get("filePath"), str):
        builder.file_change(arguments["filePath"], name)


def _usage(tokens: dict[str, Any]) -> Usage:
    """opencode already takes cached tokens out of ``input`` and reasoning out of ``output``."""
    cache = mapping(tokens.get("cache"))
    reasoning = as_int(tokens.get("reasoning"))
    return Usage(
        input=as_int(tokens.get("input")),
        cache_read=as_int(cache.get("read")),
        cache_write=as_int(cache.get("write")),
        output=as_int(tokens.get("output")) + reasoning,
        reasoning=reasoning,
    )


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        data = mapping(error.get("data"))
        return str(data.get("message") or error.get("name") or error)
    return str(error)
