"""Claude Code (``claude``), headless: ``claude -p`` with the prompt on stdin.

Permission mode: ``acceptEdits`` (edits inside the workspace) plus the Bash tool allowed; anything
else that would ask (web fetches, edits outside the workspace) is denied, since nobody answers.
Session log: we choose the session id, so the transcript is
``$CLAUDE_CONFIG_DIR/projects/<cwd slug>/<id>.jsonl``; each ``assistant`` line carries the final
usage of one API call (a call written as several lines, one per content block, shares one message
id). Subagent transcripts live beside it under ``<id>/`` and are read too.

Resuming (``--resume <id>``, from any folder): Claude Code appends to the same log under the
slug of the folder the session began in, so a resumed run's transcript is the lines and side
logs written after the ones already there.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.cli_run import CliRun, Collected, EarlierLog, Launch
from harnessdrive.harnesses.cli.flags import Flag, FlagTable
from harnessdrive.harnesses.cli.message_blocks import BlockReader, ToolKinds
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
        "print": "-p",
        "output_format": "--output-format",
        "verbose": "--verbose",
        "model": "--model",
        "effort": "--effort",
        "permission_mode": "--permission-mode",
        "allowed_tools": "--allowedTools",
        "skip_permissions": "--dangerously-skip-permissions",
        "session_id": "--session-id",
        "resume": "--resume",
        # Accepted by 2.1.x but left out of its --help.
        "max_turns": Flag("--max-turns", listed=False),
        "max_budget": "--max-budget-usd",
    }
)
TOOLS = ToolKinds(
    file_tools=frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"}),
    shell_tools=frozenset({"Bash"}),
)
_QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


class ClaudeCode(AgentCli):
    name = "claude"
    instruction_files = ("CLAUDE.md",)
    vendor = "anthropic"
    base_url_env = ("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
    executables = ("claude",)
    flags = FLAGS
    protocol = "anthropic"
    efforts = ("low", "medium", "high", "xhigh", "max")
    auth_env = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
    login_files = ((".claude/.credentials.json", ".claude/.credentials.json"),)
    login_hint = (
        "sign in: set ANTHROPIC_API_KEY, or run `{binary}` and /login, then give the variant "
        "the option login = true"
    )
    supports = (
        "model, effort (low..max), max_turns, spend cap, endpoint; permissions: acceptEdits + Bash"
    )

    def launch(self, run: CliRun) -> Launch:
        argv = [str(run.binary), FLAGS["print"], FLAGS["output_format"], "stream-json"]
        argv.append(FLAGS["verbose"])
        if run.resumed is not None:
            argv += self.resume_args(run.session_id)
        else:
            argv += [FLAGS["session_id"], run.session_id]
        env = {"CLAUDE_CONFIG_DIR": str(config_dir(run)), **_QUIET}
        if run.full_permissions:
            argv.append(FLAGS["skip_permissions"])
            env["IS_SANDBOX"] = "1"  # the flag is refused as root without it
        else:
            argv += [FLAGS["permission_mode"], "acceptEdits", FLAGS["allowed_tools"], "Bash"]
        if run.variant.model:
            argv += [FLAGS["model"], run.variant.model]
        if run.variant.effort:
            argv += [FLAGS["effort"], run.variant.effort]
        if run.options.max_turns is not None:
            argv += [FLAGS["max_turns"], str(run.options.max_turns)]
        if run.request.budget_usd is not None:
            argv += [FLAGS["max_budget"], f"{run.request.budget_usd:.4f}"]
        if run.endpoint is not None:
            env["ANTHROPIC_BASE_URL"] = run.endpoint.url
            env["ANTHROPIC_API_KEY"] = run.endpoint.api_key
            if run.endpoint.max_retries is not None:
                env["CLAUDE_CODE_MAX_RETRIES"] = str(run.endpoint.max_retries)
        return Launch(argv=argv, env=env, stdin=run.prompt_file)

    def resume_args(self, session_id: str) -> list[str]:
        return [FLAGS["resume"], session_id]

    def earlier_log(self, run: CliRun) -> EarlierLog | None:
        try:
            log = session_log(run)
        except SessionLogError:
            return None
        return EarlierLog(len(read_jsonl(log)), frozenset(log.with_suffix("").glob("**/*.jsonl")))

    def collect(self, run: CliRun, stdout: str, result: ProcessResult) -> Collected:
        stream = json_lines(stdout)
        log: Path | None
        try:
            log = session_log(run)
        except SessionLogError:
            if result.exit_code == 0:
                raise
            # A run that failed early (not signed in, say) may write no transcript; its
            # stdout still says why. Usage in stdout is a snapshot, so no calls are taken.
            log = None
        earlier = run.resumed or EarlierLog()
        lines = read_jsonl(log)[earlier.lines :] if log is not None else []
        strangers = {
            line["sessionId"]
            for line in lines
            if "sessionId" in line and line["sessionId"] != run.session_id
        }
        if strangers:
            raise SessionLogError(f"{log} holds lines of other sessions: {sorted(strangers)}")
        side_logs = sorted(
            set(log.with_suffix("").glob("**/*.jsonl")) - earlier.files if log is not None else ()
        )
        builder = TranscriptBuilder(run.workspace)
        reader = BlockReader(builder, TOOLS)
        calls: dict[str, tuple[str, Usage, str | None]] = {}
        placed: dict[str, tuple[str | None, int | None]] = {}
        """Each call's time and position: its first line's (a call spans several lines)."""
        main = lines if log is not None else stream
        # Side logs are the subagents' own sessions: their calls are billed to the run and
        # named by their log, so a budget can be held per subagent.
        agents: list[str | None] = [None, *(p.stem for p in side_logs)]
        for index, source in enumerate((main, *(read_jsonl(p) for p in side_logs))):
            if index > 0:
                _subagent_span(builder, str(agents[index]), source)
            for line in source:
                message = line.get("message")
                if not isinstance(message, dict):
                    continue
                stamp = logged_time(line.get("timestamp"))
                if line.get("type") == "assistant":
                    start = builder.mark() if index == 0 else None
                    if index == 0:
                        with builder.timed(stamp):
                            reader.assistant(message)
                    # Claude writes its own errors ("Not logged in") as "<synthetic>" messages.
                    if log is not None and message.get("model") != "<synthetic>":
                        key = str(message.get("id") or len(calls))
                        model = str(message.get("model") or "")
                        calls[key] = (model, _usage(message.get("usage")), agents[index])
                        placed.setdefault(key, (stamp, start))
                elif line.get("type") == "user" and index == 0:
                    with builder.timed(stamp):
                        reader.user(message)
        provider = self.model_provider(run, "anthropic")
        main_events = list(builder.events)
        for key, (model, usage, agent) in calls.items():
            stamp, position = placed[key]
            if position is None:
                # A subagent's call: at its time in the main agent's run (inside its Task call).
                position = position_at(main_events, stamp)
            builder.call(model, usage, provider, agent, time=stamp, position=position)
        outcome = _result(stream)
        for event in stream:
            if event.get("type") != "system":
                continue
            if event.get("subtype") == "api_retry":
                builder.retry(str(event.get("error", "")), attempt=event.get("attempt"))
            elif event.get("subtype") == "compact_boundary":
                meta = mapping(event.get("compact_metadata"))
                builder.compaction(
                    str(meta.get("trigger") or "auto"), prompt_tokens=as_int(meta.get("pre_tokens"))
                )
        denials = outcome.get("permission_denials")
        error = None
        if outcome.get("is_error"):
            errors = outcome.get("errors") or []
            error = "; ".join(map(str, errors)) or str(outcome.get("result", "")) or "failed"
            builder.error(error, subtype=outcome.get("subtype"))
        for denial in denials if isinstance(denials, list) else []:
            builder.denial(str(denial.get("tool_name", "")) if isinstance(denial, dict) else "")
        cost = outcome.get("total_cost_usd")
        return Collected(
            builder.build(
                session_id=run.session_id,
                turns=as_int(outcome["num_turns"]) if "num_turns" in outcome else None,
                final_message=outcome.get("result") if not error else None,
                reported_cost_usd=float(cost) if isinstance(cost, int | float) else None,
                error=error,
            ),
            session_log=log,
            extra_logs=tuple(side_logs),
        )


def _subagent_span(builder: TranscriptBuilder, name: str, lines: list[dict[str, Any]]) -> None:
    """A subagent's time, from the first to the last timestamp of its own log."""
    stamps = []
    for line in lines:
        try:
            stamp = datetime.fromisoformat(str(line["timestamp"]).replace("Z", "+00:00"))
        except (KeyError, ValueError):
            continue
        if stamp.tzinfo is not None:  # the log is the agent's to write: naive times are noise
            stamps.append(stamp)
    if stamps:
        seconds = (max(stamps) - min(stamps)).total_seconds()
        builder.event("note", f"subagent {name}", subagent=name, seconds=round(seconds, 3))


def config_dir(run: CliRun) -> Path:
    return run.home / ".claude"


def session_log(run: CliRun) -> Path:
    """The transcript of this run's own session id; missing is a SessionLogError."""
    found = sorted((config_dir(run) / "projects").glob(f"*/{run.session_id}.jsonl"))
    if not found:
        raise SessionLogError(f"no transcript for session {run.session_id} under {config_dir(run)}")
    return found[0]


def _result(stream: list[dict[str, Any]]) -> dict[str, Any]:
    for event in reversed(stream):
        if event.get("type") == "result":
            return mapping(event)
    return {}


def _usage(raw: Any) -> Usage:
    """Anthropic usage is already in disjoint tiers; output includes thinking."""
    usage = raw if isinstance(raw, dict) else {}
    details = usage.get("output_tokens_details") or {}
    creation = usage.get("cache_creation") or {}
    return Usage(
        input=as_int(usage.get("input_tokens")),
        cache_read=as_int(usage.get("cache_read_input_tokens")),
        cache_write=as_int(usage.get("cache_creation_input_tokens")),
        cache_write_1h=as_int(creation.get("ephemeral_1h_input_tokens")),
        output=as_int(usage.get("output_tokens")),
        reasoning=as_int(details.get("thinking_tokens")),
    )
