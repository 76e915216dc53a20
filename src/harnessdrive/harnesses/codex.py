"""OpenAI Codex CLI (``codex exec``), headless, with the prompt on stdin (``-``).

Permission mode: Codex's own ``workspace-write`` sandbox with approvals ``never``: it may edit
the workspace and run commands there, without network. Codex needs a TMPDIR outside /tmp to set up
that sandbox, which the trial's private TMPDIR gives it. Session log: the only rollout under the
trial's private ``CODEX_HOME``, checked to carry the thread id the stream announced; each
``token_usage_record`` in it is one model call. ``exec resume <id>`` appends to that rollout, so a
resumed run counts the records after the lines already there. Services of the trial (an
evaluator, an oracle, on 127.0.0.1) are reachable from Codex's sandbox only with its network on,
which it gets when our sandbox has a network of its own: there, only those ports lead anywhere.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.cli_run import CliRun, Collected, EarlierLog, Launch
from harnessdrive.harnesses.cli.flags import FlagTable
from harnessdrive.harnesses.cli.recording import (
    SessionLogError,
    TranscriptBuilder,
    as_int,
    json_lines,
    mapping,
    only_file,
    openai_usage,
    read_jsonl,
)
from harnessdrive.harnesses.codex_rollout import StreamItem, place_calls
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.transcript.models import Usage

FLAGS = FlagTable(
    {
        "json": "--json",
        "model": "--model",
        "config": "--config",
        "sandbox": "--sandbox",
        "bypass": "--dangerously-bypass-approvals-and-sandbox",
        "skip_git_check": "--skip-git-repo-check",
        "workdir": "--cd",
    }
)
PROVIDER_ID = "harnessdrive"
KEY_VARIABLE = "HARNESSDRIVE_CODEX_API_KEY"


class Codex(AgentCli):
    name = "codex"
    instruction_files = ("AGENTS.md",)
    vendor = "openai"
    executables = ("codex",)
    flags = FLAGS
    protocol = "openai"
    efforts = ("low", "medium", "high", "xhigh")
    auth_env = ("OPENAI_API_KEY", "CODEX_API_KEY")
    login_files = ((".codex/auth.json", ".codex/auth.json"),)
    login_hint = (
        "sign in: set OPENAI_API_KEY or CODEX_API_KEY, or run `{binary} login`, then give the "
        "variant the option login = true"
    )
    help_args = ("exec", "--help")
    supports = "model, effort (low..xhigh), endpoint (Responses API); permissions: workspace-write"

    def nests_sandbox(self, run: CliRun) -> bool:
        return not run.full_permissions

    def launch(self, run: CliRun) -> Launch:
        home = codex_home(run)
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(_config(run), encoding="utf-8")
        argv = [str(run.binary), "exec", FLAGS["json"], FLAGS["skip_git_check"]]
        argv += [FLAGS["workdir"], str(run.workspace)]
        if run.full_permissions:
            argv.append(FLAGS["bypass"])
        else:
            argv += [FLAGS["sandbox"], "workspace-write"]
            argv += [FLAGS["config"], 'approval_policy="never"']
        if run.variant.model:
            argv += [FLAGS["model"], run.variant.model]
        if run.variant.effort:
            argv += [FLAGS["config"], f'model_reasoning_effort="{run.variant.effort}"']
        if run.resumed is not None:
            argv += self.resume_args(run.session_id)
        argv.append("-")  # the prompt comes on stdin
        env = {"CODEX_HOME": str(home)}
        if run.endpoint is not None:
            env[KEY_VARIABLE] = run.endpoint.api_key
        return Launch(argv=argv, env=env, stdin=run.prompt_file)

    def resume_args(self, session_id: str) -> list[str]:
        return ["resume", session_id]

    def earlier_log(self, run: CliRun) -> EarlierLog | None:
        try:
            rollout = only_file(codex_home(run).glob("sessions/**/rollout-*.jsonl"), "rollout")
        except SessionLogError:
            return None
        return EarlierLog(len(read_jsonl(rollout)))

    def collect(self, run: CliRun, stdout: str, result: ProcessResult) -> Collected:
        stream = json_lines(stdout)
        thread = next(
            (str(e.get("thread_id")) for e in stream if e.get("type") == "thread.started"), None
        )
        builder = TranscriptBuilder(run.workspace)
        final, items = _read_stream(stream, builder)
        try:
            rollout = only_file(codex_home(run).glob("sessions/**/rollout-*.jsonl"), "rollout")
        except SessionLogError:
            if result.exit_code == 0:
                raise
            return Collected(builder.build(session_id=thread))
        lines = read_jsonl(rollout)
        meta = next((line for line in lines if line.get("type") == "session_meta"), {})
        owner = str((meta.get("payload") or {}).get("id", ""))
        if thread is not None and owner != thread:
            raise SessionLogError(f"{rollout.name} belongs to thread {owner!r}, not {thread!r}")
        model = run.variant.model or ""
        provider = self.model_provider(run, "openai")
        earlier = run.resumed.lines if run.resumed is not None else 0
        for index, line in enumerate(lines):
            payload = mapping(line.get("payload"))
            if line.get("type") == "turn_context":
                model = str(payload.get("model") or model)
            elif line.get("type") == "token_usage_record" and index >= earlier:
                builder.call(model, _usage(payload.get("usage")), provider)
        place_calls(lines[earlier:], items, builder)
        return Collected(
            builder.build(session_id=owner or thread, final_message=final), session_log=rollout
        )


def codex_home(run: CliRun) -> Path:
    return run.home / ".codex"


def _config(run: CliRun) -> str:
    lines = ["check_for_update_on_startup = false"]
    if run.endpoint is not None:
        lines.append(f"model_provider = {_toml(PROVIDER_ID)}")
    lines += ["", "[analytics]", "enabled = false", ""]
    if run.request.services and run.request.network != "host":
        lines += ["[sandbox_workspace_write]", "network_access = true", ""]
    if run.endpoint is not None:
        lines += [
            f"[model_providers.{PROVIDER_ID}]",
            f"name = {_toml(run.endpoint.provider)}",
            f"base_url = {_toml(run.endpoint.url)}",
            f"env_key = {_toml(KEY_VARIABLE)}",
            'wire_api = "responses"',
        ]
        if run.endpoint.max_retries is not None:
            lines.append(f"request_max_retries = {run.endpoint.max_retries}")
            lines.append(f"stream_max_retries = {run.endpoint.max_retries}")
    return "\n".join(lines) + "\n"


def _toml(value: str) -> str:
    # A JSON string is a valid TOML basic string.
    return json.dumps(value)


def _read_stream(
    stream: list[dict[str, Any]], builder: TranscriptBuilder
) -> tuple[str | None, list[StreamItem]]:
    """Events from ``codex exec --json``; returns the last agent message and where each
    completed item's events are."""
    final = None
    items: list[StreamItem] = []
    for event in stream:
        kind = event.get("type")
        if kind == "item.completed":
            item = mapping(event.get("item"))
            start = builder.mark()
            final = _item(item, builder) or final
            items.append(StreamItem(str(item.get("type", "")), start, builder.mark()))
        elif kind == "turn.failed":
            error = mapping(event.get("error"))
            builder.error(str(error.get("message", "turn failed")))
        elif kind == "error":
            message = str(event.get("message", ""))
            if message.startswith("Reconnecting"):  # "Reconnecting... 2/5": a retry
                builder.retry(message)
            else:
                builder.error(message)
    return final, items


def _item(item: dict[str, Any], builder: TranscriptBuilder) -> str | None:
    kind = item.get("type")
    if kind == "agent_message":
        text = str(item.get("text", ""))
        builder.message(text)
        return text
    if kind == "command_execution":
        command = str(item.get("command", ""))
        builder.tool_call("exec_command", {"cmd": command}, str(item.get("id", "")))
        code = item.get("exit_code")
        output = item.get("aggregated_output")
        builder.command(command, code if isinstance(code, int) else None, output)
    elif kind == "file_change":
        builder.tool_call("apply_patch", item.get("changes"), str(item.get("id", "")))
        failed = item.get("status") == "failed"
        for change in item.get("changes") or []:
            if isinstance(change, dict) and not failed:
                builder.file_change(str(change.get("path", "")), str(change.get("kind", "")))
        if failed:
            builder.error("a file change failed", item=item.get("id"))
    elif kind in ("mcp_tool_call", "web_search"):
        builder.tool_call(str(item.get("tool") or kind), item, str(item.get("id", "")))
    elif kind == "error":
        # Codex reports recoverable problems (unknown model metadata) as error items.
        builder.event("note", str(item.get("message", "")))
    return None


def _usage(raw: Any) -> Usage:
    usage = raw if isinstance(raw, dict) else {}
    return openai_usage(
        prompt=as_int(usage.get("input_tokens")),
        cached=as_int(usage.get("cached_input_tokens")),
        cache_write=as_int(usage.get("cache_write_input_tokens")),
        completion=as_int(usage.get("output_tokens")),
        reasoning=as_int(usage.get("reasoning_output_tokens")),
    )
