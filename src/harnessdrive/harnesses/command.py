"""The generic harness: run any CLI from a shell command template.

Variant options (:class:`CommandOptions`): ``template`` (required), ``stdin_prompt``, ``env``,
``set_env``, ``version_command``, ``show``: further folders (or files) the agent may read, a
script kept under /tmp, say, and ``model_url``: the model API the command calls, reached through
harnessdrive's proxy. Each is shown read-only at its own path; a path that would show the
results folder, the suite or the hidden files is refused before the run starts.

When the command fails and a path the template names exists here but not inside the sandbox,
the error says so, with the fix, and the trial is ``could_not_run``.

The prompt goes by file or stdin, never by argv: an agent's ``pkill -f`` on its own argv must not
hit its harness.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
import subprocess
from typing import ClassVar

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr

from harnessdrive.harnesses.base import AgentRequest, AgentRun, HarnessInfo
from harnessdrive.harnesses.cli.fatal import fatal_hint, last_line
from harnessdrive.harnesses.cli.template_paths import show_option, unseen_hint, unseen_paths
from harnessdrive.harnesses.options import HarnessOptions, parse_options
from harnessdrive.proxy import CALLS_FILE, ModelProxy
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.commands import render, shell_argv
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.limits import describe
from harnessdrive.sandbox.runner import Isolation
from harnessdrive.tasks.models import VariantSpec

MODEL_URL_VARIABLE = "HARNESSDRIVE_MODEL_URL"


class CommandOptions(HarnessOptions):
    """``options`` of a ``command`` variant."""

    expected: ClassVar[dict[str, str]] = {
        "template": "a non-empty command line",
        "stdin_prompt": "true or false",
        "env": "a variable name or a list of them",
        "set_env": "a table of variable names and values",
        "version_command": "a command line",
        "show": "a list of paths",
        "model_url": "an http(s) URL",
    }

    template: StrictStr = Field(pattern=r"\S")
    """The command line, with ``{workspace}``, ``{prompt_file}``, ``{model}``, ``{effort}``,
    ``{home}`` and ``{python}`` filled in shell-quoted."""
    stdin_prompt: StrictBool = False
    """Feed the prompt on standard input instead of /dev/null."""
    env: StrictStr | tuple[StrictStr, ...] = ()
    """Names of variables passed through from your environment (the CLI's API key, say)."""
    set_env: dict[StrictStr, StrictStr | StrictInt | StrictFloat | StrictBool] = Field(
        default_factory=dict
    )
    """Variables to set."""
    version_command: StrictStr | None = None
    """A command whose first output line is the CLI's version."""
    show: tuple[StrictStr, ...] | None = None
    """Further folders or files the agent may read, by absolute or ``~`` path."""
    model_url: StrictStr | None = Field(default=None, pattern=r"^https?://")
    """The base URL of the model API the command calls. Its calls then go through
    harnessdrive's proxy, whose URL the command gets as ``{model_url}`` and in
    ``$HARNESSDRIVE_MODEL_URL``; what the proxy sees decides whether the run got to work."""


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

    options_model = CommandOptions

    def check_variant(self, variant: VariantSpec) -> None:
        options = parse_options(CommandOptions, variant, self.name)
        show_option(options.show, variant.label)

    def run(self, request: AgentRequest) -> AgentRun:
        options = parse_options(CommandOptions, request.variant, self.name)
        request.logs.mkdir(parents=True, exist_ok=True)
        if options.model_url is None:
            return self._run(request, options, None)
        calls = request.logs / CALLS_FILE
        with ModelProxy(options.model_url, calls_file=calls) as proxy:
            run = self._run(request, options, proxy.url_for(options.model_url))
            return dataclasses.replace(run, traffic=proxy.traffic())

    def _run(
        self, request: AgentRequest, options: CommandOptions, model_url: str | None
    ) -> AgentRun:
        template = options.template
        values = {
            "workspace": str(request.workspace),
            "prompt_file": str(request.prompt_file),
            "model": request.variant.model or "",
            "effort": request.variant.effort or "",
            "home": str(request.home),
            "python": request.python,
            "model_url": model_url or "",
        }
        command = render(template, values)
        env = base_environment(
            request.home,
            request.tmp,
            passthrough=(options.env,) if isinstance(options.env, str) else options.env,
            extra={
                **request.services,
                **{name: str(value) for name, value in options.set_env.items()},
                **({MODEL_URL_VARIABLE: model_url} if model_url else {}),
            },
        )
        started = now()
        isolation = Isolation(
            writable=(request.workspace, request.home, request.tmp),
            readonly=(request.prompt_file, *request.readonly),
            tools=show_option(options.show, request.variant.label),
            network=request.network,
        )
        result = request.sandbox.run(
            shell_argv(command),
            cwd=request.workspace,
            env=env,
            timeout=request.timeout,
            stdout=request.stdout,
            stderr=request.stderr,
            stdin=request.prompt_file if options.stdin_prompt else None,
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
                # "Command not found" and harnessdrive finds no such program either: it never
                # started. The exit status alone would be the command's own word.
                could_not_run = result.exit_code == 127 and _program_missing(command, env)
        return AgentRun(
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            stopped=result.stopped,
            seconds=now() - started,
            error=error,
            hint=hint,
            limit=result.limit,
            could_not_run=could_not_run,
            version=_version(options.version_command),
            stdout_record=result.stdout_record,
            stderr_record=result.stderr_record,
        )


def _binary(template: str) -> str:
    try:
        words = shlex.split(template)
    except ValueError:
        words = template.split()
    return words[0] if words else "the command"


def _version(command: str | None) -> str | None:
    if not command:
        return None
    try:
        out = subprocess.run(
            shell_argv(command), capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0].strip() if lines else None


_LAUNCHERS = frozenset({"exec", "command", "env", "nohup"})
"""Words that only start the next word as the program (``exec agent ...``)."""
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _started_program(command: str) -> str:
    """The program a command line really starts: past variable assignments and launchers."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words:
        if not _ASSIGNMENT.match(word) and word not in _LAUNCHERS:
            return word
    return _binary(command)


def _program_missing(command: str, env: dict[str, str]) -> bool:
    """Whether the program the command line starts is nowhere to be found (not a file, not on
    the trial's PATH, not a shell builtin or keyword), as harnessdrive checks it."""
    program = _started_program(command)
    if "/" in program:
        return not os.access(program, os.X_OK)
    if shutil.which(program, path=env.get("PATH")) is not None:
        return False
    try:
        kind = subprocess.run(
            ["bash", "-c", 'type -t -- "$1"', "type", program],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            env={"PATH": env.get("PATH", os.defpath)},
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return not kind.stdout.strip()


def binary_installed(template: str) -> bool:
    return shutil.which(_binary(template)) is not None
