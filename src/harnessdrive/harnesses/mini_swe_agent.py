"""mini-swe-agent (``mini``), headless: ``--yolo --exit-immediately``, the task in a config file.

mini reads its task from the config key ``run.task``, so the prompt goes in a config file we write
in the trial's HOME (JSON, which mini's YAML reader accepts), never on the command line.
Permission mode: mini's only tool is ``bash`` and ``--yolo`` runs it without asking; the trial's
sandbox is the boundary. Session log: the trajectory at the ``-o`` path we choose. mini finishes
by running ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` (exit status ``Submitted``). Its own
cost limit (3 USD by default) is switched off unless the run gives a spend cap.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.cli_run import CliRun, Collected, Launch
from harnessdrive.harnesses.cli.flags import FlagTable
from harnessdrive.harnesses.cli.recording import (
    SessionLogError,
    TranscriptBuilder,
    litellm_usage,
    logged_time,
    mapping,
)
from harnessdrive.sandbox.process import ProcessResult

FLAGS = FlagTable(
    {
        "model": "--model",
        "config": "--config",
        "yolo": "--yolo",
        "exit_immediately": "--exit-immediately",
        "output": "--output",
        "cost_limit": "--cost-limit",
    }
)
SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


class MiniSweAgent(AgentCli):
    name = "mini-swe-agent"
    executables = ("mini",)
    flags = FLAGS
    protocol = "openai"
    efforts = ("minimal", "low", "medium", "high")
    auth_env = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY")
    login_hint = "sign in: set the API key variable of the model's provider (OPENAI_API_KEY, ...)"
    supports = (
        "model (litellm id), effort (reasoning_effort), max_turns (step_limit), spend cap, "
        "endpoint (Chat Completions); one bash tool, no permission prompts"
    )

    def sets_max_turns(self) -> bool:
        return True

    def launch(self, run: CliRun) -> Launch:
        settings = run.home / "harnessdrive-mini.yaml"
        settings.write_text(json.dumps(_settings(run), indent=2), encoding="utf-8")
        model = run.variant.model
        if run.endpoint is not None:
            # litellm picks the wire protocol from the prefix; an endpoint is OpenAI-compatible.
            model = f"openai/{model or 'default'}"
        argv = [str(run.binary)]
        if model:
            argv += [FLAGS["model"], model]
        builtin = builtin_config(run.binary)
        if builtin is not None:
            # Named by path: a bare "mini.yaml" would be looked up in the workspace first.
            argv += [FLAGS["config"], str(builtin)]
        argv += [FLAGS["config"], str(settings), FLAGS["yolo"], FLAGS["exit_immediately"]]
        argv += [FLAGS["output"], str(trajectory(run))]
        budget = run.request.budget_usd
        argv += [FLAGS["cost_limit"], f"{budget:.4f}" if budget is not None else "0"]
        env = {
            "MSWEA_CONFIGURED": "true",
            "MSWEA_GLOBAL_CONFIG_DIR": str(run.home / ".config" / "mini-swe-agent"),
            "MSWEA_COST_TRACKING": "ignore_errors",
            "MSWEA_SILENT_STARTUP": "1",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        if run.endpoint is not None:
            env["OPENAI_API_KEY"] = run.endpoint.api_key
            if run.endpoint.max_retries is not None:
                env["MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT"] = str(run.endpoint.max_retries + 1)
        return Launch(argv=argv, env=env)

    def collect(self, run: CliRun, stdout: str, result: ProcessResult) -> Collected:
        builder = TranscriptBuilder(run.workspace)
        path = trajectory(run)
        if not path.is_file():
            if result.exit_code == 0:
                raise SessionLogError(f"no trajectory at {path}")
            return Collected(builder.build())
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise SessionLogError(f"{path.name} is not JSON: {exc}") from None
        info = mapping(data.get("info"))
        ending: dict[str, Any] = {}
        for message in data.get("messages") or []:
            if not isinstance(message, dict):
                continue
            if message.get("role") == "exit" and isinstance(message.get("extra"), dict):
                ending = message["extra"]
            else:
                _message(message, builder, self.model_provider, run)
        status = str(ending.get("exit_status") or info.get("exit_status") or "")
        submission = ending.get("submission", info.get("submission"))
        if status and status != "Submitted":
            builder.error(f"mini stopped: {status}", detail=str(submission or "")[:500])
        stats = mapping(info.get("model_stats"))
        cost = stats.get("instance_cost")
        return Collected(
            builder.build(
                final_message=_last_message(builder),
                reported_cost_usd=(
                    float(cost) if isinstance(cost, int | float) and run.endpoint is None else None
                ),
            ),
            session_log=path,
        )


def trajectory(run: CliRun) -> Path:
    return run.home / "trajectory.json"


def builtin_config(binary: Path) -> Path | None:
    """mini's own ``mini.yaml`` in the venv it was installed into."""
    venv = binary.resolve().parent.parent
    found = sorted(venv.glob("lib/python*/site-packages/minisweagent/config/mini.yaml"))
    return found[0] if found else None


def _settings(run: CliRun) -> dict[str, Any]:
    model: dict[str, Any] = {}
    kwargs: dict[str, Any] = {}
    if run.endpoint is not None:
        kwargs["api_base"] = run.endpoint.url
    if run.variant.effort:
        kwargs["reasoning_effort"] = run.variant.effort
    if kwargs:
        model["model_kwargs"] = kwargs
    settings: dict[str, Any] = {
        "run": {"task": run.prompt_file.read_text(encoding="utf-8")},
        "model": model,
    }
    if run.options.max_turns is not None:
        settings["agent"] = {"step_limit": run.options.max_turns}
    return settings


def _message(
    message: dict[str, Any], builder: TranscriptBuilder, provider_of: Any, run: CliRun
) -> None:
    """Events and the model call of one trajectory message."""
    extra = mapping(message.get("extra"))
    # mini stamps each message it adds with time.time(): seconds since the epoch.
    stamp = logged_time(extra.get("timestamp"), epoch="s")
    with builder.timed(stamp):
        _events_of(message, extra, builder, provider_of, run, stamp)


def _events_of(
    message: dict[str, Any],
    extra: dict[str, Any],
    builder: TranscriptBuilder,
    provider_of: Any,
    run: CliRun,
    stamp: str | None,
) -> None:
    role = message.get("role")
    if role == "assistant":
        start = builder.mark()
        content = message.get("content")
        if isinstance(content, str):
            builder.message(content)
        for action in extra.get("actions") or []:
            if isinstance(action, dict):
                call_id = action.get("tool_call_id")
                builder.tool_call("bash", {"command": action.get("command")}, call_id)
        response = mapping(extra.get("response"))
        usage = response.get("usage")
        if isinstance(usage, dict):
            model = str(response.get("model") or run.variant.model or "")
            provider = provider_of(run, _prefix(run.variant.model))
            builder.call(model, litellm_usage(usage), provider, time=stamp, position=start)
    elif role == "tool":
        command = _command_of(message, builder)
        returncode = extra.get("returncode")
        output = extra.get("raw_output") if "raw_output" in extra else message.get("content")
        builder.tool_result(message.get("tool_call_id"), output, name="bash")
        if SUBMIT in command:
            return  # the finishing command is never executed, by design
        if command:
            builder.command(command, returncode if isinstance(returncode, int) else None, output)
        if extra.get("exception_info"):
            builder.error(str(extra["exception_info"])[:500])


def _last_message(builder: TranscriptBuilder) -> str | None:
    for event in reversed(builder.events):
        if event.kind == "message":
            return event.text
    return None


def _command_of(message: dict[str, Any], builder: TranscriptBuilder) -> str:
    call_id = message.get("tool_call_id")
    for event in reversed(builder.events):
        if event.kind == "tool_call" and event.data.get("id") == call_id:
            command = event.data.get("input", {}).get("command")
            return str(command) if command else ""
    return ""


def _prefix(model: str | None) -> str | None:
    """litellm's provider prefix (``anthropic/claude-...``), when there is one."""
    if model and "/" in model:
        return model.split("/", 1)[0]
    return None
