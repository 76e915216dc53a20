"""The generic harness: run any CLI from a shell command template.

Variant options:

- ``template`` (required): the command line, with placeholders ``{workspace}``, ``{prompt_file}``,
  ``{model}``, ``{effort}``, ``{home}`` and ``{python}``, each filled in shell-quoted;
- ``stdin_prompt`` (default false): feed the prompt on standard input instead of /dev/null;
- ``env``: names of variables to pass through from the caller (the CLI's API key, say);
- ``set_env``: variables to set;
- ``version_command``: a command whose first output line is the CLI's version;
- ``show``: further folders (or files) the agent may read, by absolute or ``~`` path: a script
  kept under /tmp, say. Each is shown read-only at its own path; a path that would show the
  results folder, the suite or the hidden files is refused before the run starts.

When the command fails and a path the template names exists here but not inside the sandbox,
the error says so, with the fix, and the trial is ``could_not_run``.

The prompt goes by file or stdin, never by argv: an agent's ``pkill -f`` on its own argv must not
hit its harness.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any

from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.harnesses.base import AgentRequest, AgentRun, HarnessInfo
from harnessdrive.harnesses.fatal import fatal_hint, last_line
from harnessdrive.harnesses.template_paths import show_option, unseen_hint, unseen_paths
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.commands import render, shell_argv
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.limits import describe
from harnessdrive.sandbox.runner import Isolation
from harnessdrive.tasks.models import VariantSpec

_OPTIONS = frozenset({"template", "stdin_prompt", "env", "set_env", "version_command", "show"})


class CommandHarness:
    """Any CLI, from a shell command template."""

    name = "command"

    def info(self) -> HarnessInfo:
        return HarnessInfo(
            name=self.name,
            installed=True,
            version=None,
            detail="any CLI from a command template (variant option 'template')",
            uses_model=True,
        )

    def check_variant(self, variant: VariantSpec) -> None:
        unknown = set(variant.options) - _OPTIONS
        if unknown:
            first = min(unknown)
            raise UserError(
                f"variant {variant.label}: unknown option(s) for the command harness: "
                f"{', '.join(sorted(unknown))}{did_you_mean(first, _OPTIONS)} "
                f"(known: {', '.join(sorted(_OPTIONS))})"
            )
        template = variant.options.get("template")
        if not isinstance(template, str) or not template.strip():
            raise UserError(f"variant {variant.label}: the command harness needs a 'template'")
        show_option(variant.options.get("show"), variant.label)

    def run(self, request: AgentRequest) -> AgentRun:
        options = request.variant.options
        template = str(options["template"])
        values = {
            "workspace": str(request.workspace),
            "prompt_file": str(request.prompt_file),
            "model": request.variant.model or "",
            "effort": request.variant.effort or "",
            "home": str(request.home),
            "python": request.python,
        }
        command = render(template, values)
        env = base_environment(
            request.home,
            request.tmp,
            passthrough=_names(options.get("env", ())),
            extra=_mapping(options.get("set_env", {})),
        )
        started = now()
        request.logs.mkdir(parents=True, exist_ok=True)
        isolation = Isolation(
            writable=(request.workspace, request.home, request.tmp),
            readonly=(request.prompt_file, *request.readonly),
            tools=show_option(options.get("show"), request.variant.label),
            network=request.network,
        )
        result = request.sandbox.run(
            shell_argv(command),
            cwd=request.workspace,
            env=env,
            timeout=request.timeout,
            stdout=request.stdout,
            stderr=request.stderr,
            stdin=request.prompt_file if options.get("stdin_prompt") else None,
            isolation=isolation,
            stop=request.stop,
        )
        error = None
        hint = None
        could_not_run = False
        if result.limit is not None:
            error = describe(result.limit, request.sandbox.settings.limits)
        elif result.exit_code not in (0, None) and not result.timed_out and not result.stopped:
            error = last_line(request.stderr.read_text(errors="replace")) or (
                f"exited with {result.exit_code}"
            )
            unseen = unseen_paths(
                template,
                request.sandbox,
                cwd=request.workspace,
                env=env,
                isolation=isolation,
                scratch=request.tmp,
            )
            if unseen:
                # The cause is named either way; only a program or script that could not start
                # (126, 127) means the harness never ran. Any other failure is the agent's own,
                # and graded: a template an agent controls must not turn a fail into "not run".
                hint, could_not_run = unseen_hint(unseen), result.exit_code in (126, 127)
            else:
                hint = fatal_hint(error, _binary(template))
        return AgentRun(
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            stopped=result.stopped,
            seconds=now() - started,
            error=error,
            hint=hint,
            limit=result.limit,
            could_not_run=could_not_run,
            version=_version(options.get("version_command")),
            stdout_record=result.stdout_record,
            stderr_record=result.stderr_record,
        )


def _binary(template: str) -> str:
    try:
        words = shlex.split(template)
    except ValueError:
        words = template.split()
    return words[0] if words else "the command"


def _version(command: Any) -> str | None:
    if not isinstance(command, str) or not command:
        return None
    try:
        out = subprocess.run(
            shell_argv(command), capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0].strip() if lines else None


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _mapping(value: Any) -> Mapping[str, str]:
    return {str(k): str(v) for k, v in dict(value).items()}


def binary_installed(template: str) -> bool:
    return shutil.which(_binary(template)) is not None
