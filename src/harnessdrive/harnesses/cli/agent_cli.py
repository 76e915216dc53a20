"""What every real agent-CLI adapter shares; each CLI module fills in a few methods.

A run, in order: find the executable and its version; build the command (the CLI module writes
its private config under the trial's HOME and returns argv and environment); check every flag of
that command against the installed CLI's ``--help``; run it in the trial's sandbox with stdin
from the prompt file or /dev/null; bind the run to its own session log and parse stdout and that
log into a Transcript; copy the log into the trial folder; and turn errors that will repeat on
every task (not signed in, a version without a needed flag, no executable) into a fix hint.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

from harnessdrive.errors import HarnessError, UserError
from harnessdrive.harnesses.base import (
    AgentRequest,
    AgentRun,
    HarnessInfo,
    ModelPlan,
    PlannedModel,
    can_resume,
)
from harnessdrive.harnesses.cli.binaries import (
    Located,
    binary_variable,
    install_roots,
    locate,
    parse_version,
    probe,
)
from harnessdrive.harnesses.cli.cli_run import CliRun, Collected, EarlierLog, Launch
from harnessdrive.harnesses.cli.endpoint import Endpoint, Protocol, require, resolve
from harnessdrive.harnesses.cli.fatal import FatalKind, fatal_kind, last_line
from harnessdrive.harnesses.cli.flags import FlagTable, missing_flags
from harnessdrive.harnesses.cli.install import install_command
from harnessdrive.harnesses.cli.options import CliOptions
from harnessdrive.harnesses.cli.provenance import run_setting
from harnessdrive.harnesses.cli.recording import SessionLogError
from harnessdrive.harnesses.ladder import EffortLadder, unknown_rung
from harnessdrive.harnesses.options import parse_options
from harnessdrive.proxy import CALLS_FILE, ModelProxy, Traffic
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.limits import describe
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.sandbox.runner import Isolation
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Transcript

NON_INTERACTIVE_NOTE = (
    "\n\n---\nYou are running non-interactively: nobody will answer questions or approve "
    "anything, so decide for yourself and finish the task before you stop. Anything you leave "
    "running in the background is stopped when your turn ends.\n"
)


class AgentCli:
    """Base of the real-CLI adapters. Subclasses set the class attributes and three methods:
    ``launch`` (private config + argv), ``collect`` (bind and parse the session log) and,
    optionally, ``check_options``."""

    name: ClassVar[str] = ""
    executables: ClassVar[tuple[str, ...]] = ()
    flags: ClassVar[FlagTable] = FlagTable({})
    protocol: ClassVar[Protocol] = "openai"
    efforts: ClassVar[tuple[str, ...]] = ()
    """The CLI's own reasoning-effort ladder, lowest first; empty when it has none. The plan
    checks a variant's effort against it and resolves ``min``/``mid``/``max`` (matrix/effort.py)."""
    instruction_files: ClassVar[tuple[str, ...]] = ()
    """The files the CLI reads standing instructions from in the workspace (``AGENTS.md``)."""
    options_model: ClassVar[type[CliOptions]] = CliOptions
    """The variant options this CLI takes: the common ones, plus any of its own."""
    auth_env: ClassVar[tuple[str, ...]] = ()
    """API-key variables passed through from the caller when no endpoint is set."""
    login_files: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(file under your HOME, file under the trial's HOME) copied with ``login = true``."""
    login_hint: ClassVar[str] = "sign in to `{binary}` once, or set its API key"
    exit_kinds: ClassVar[dict[int, FatalKind]] = {}
    """Exit codes that mean an error repeating on every task (Gemini's 41: not signed in)."""
    help_args: ClassVar[tuple[str, ...]] = ("--help",)
    version_args: ClassVar[tuple[str, ...]] = ("--version",)
    supports: ClassVar[str] = ""
    vendor: ClassVar[str | None] = None
    """Who bills the CLI's own API (``anthropic`` for Claude Code); None for CLIs that reach
    many providers, whose model id then names the provider."""
    untested: ClassVar[bool] = False
    """True for adapters written from documentation only, never run against the live CLI."""
    base_url_env: ClassVar[tuple[str, str] | None] = None
    """Without an endpoint: the variable that sets the CLI's API base URL and the vendor's URL
    it defaults to, so an API-key run's traffic goes through the proxy too."""

    # What callers see -----------------------------------------------------------------

    def info(self) -> HarnessInfo:
        located = locate(self.executables, self.name, None)
        untested = " (untested against a live CLI)" if self.untested else ""
        if located.path is None:
            _error, fix, _version = self._not_found(located)
            return HarnessInfo(
                name=self.name,
                installed=False,
                detail=f"supports {self.supports}{untested}",
                uses_model=True,
                found=f"not found; {fix}",
            )
        return HarnessInfo(
            name=self.name,
            installed=True,
            version=self._version(located.path),
            binary=str(located.path),
            detail=f"supports {self.supports}{untested}",
            uses_model=True,
            found=f"{located.how}: {located.path}",
        )

    def plan_models(self, variant: VariantSpec) -> ModelPlan:
        """The pinned model, billed by the endpoint's provider or the CLI's vendor.

        Without ``--model`` the CLI's default may change under us, so the plan is empty and a
        priced run refuses to start until a model is pinned.
        """
        if not variant.model:
            return ModelPlan()
        provider = self.vendor
        endpoint = self.parse_options(variant).endpoint
        if endpoint is not None:
            provider = endpoint.provider
        return ModelPlan(models=(PlannedModel(variant.model, provider),), source="--model")

    def check_variant(self, variant: VariantSpec) -> None:
        label = variant.label
        options = self.parse_options(variant)
        if variant.effort is not None:
            effort_problem = unknown_rung(EffortLadder(self.efforts), variant.effort, aliases=False)
            if effort_problem:
                raise UserError(f"variant {label}: {self.name} {effort_problem}")
        if (
            options.max_turns is not None
            and "max_turns" not in self.flags
            and not self.sets_max_turns()
        ):
            raise UserError(f"variant {label}: {self.name} has no turn limit")
        if options.endpoint is not None:
            require(options.endpoint, self.protocol, self.name, label)
        self.check_options(variant, options)

    def parse_options(self, variant: VariantSpec) -> CliOptions:
        """The variant's options as this CLI's model; anything wrong is a one-line UserError."""
        return parse_options(self.options_model, variant, self.name)

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        request.logs.mkdir(parents=True, exist_ok=True)
        options = self.parse_options(request.variant)
        located = locate(self.executables, self.name, options.binary)
        if located.path is None:
            return self._could_not_run(started, *self._not_found(located))
        binary = located.path
        version = self._version(binary)
        try:
            endpoint = (
                None
                if options.endpoint is None
                else resolve(options.endpoint, self.protocol, request.task.id)
            )
        except UserError as exc:
            return self._could_not_run(started, str(exc), f"{exc}", version)
        upstream = self._upstream(endpoint, options, request.variant)
        with contextlib.ExitStack() as stack:
            proxy = None
            base_url: dict[str, str] = {}
            if upstream is not None:
                url, variable = upstream
                calls = request.logs / CALLS_FILE
                proxy = stack.enter_context(ModelProxy(url, calls_file=calls))
                if endpoint is not None:
                    endpoint = dataclasses.replace(endpoint, url=proxy.url_for(endpoint.url))
                elif variable is not None:
                    # The vendor's URL may carry a path (``.../v1``): the CLI must keep calling it.
                    base_url = {variable: proxy.url_for(url)}
            run = CliRun(
                request=request,
                binary=binary,
                version=version,
                endpoint=endpoint,
                prompt_file=self._write_prompt(request),
                session_id=str(uuid.uuid4()),
                options=options,
            )
            return self._launch_and_finish(run, started, proxy, base_url)

    def base_url_setting(self, variant: VariantSpec) -> tuple[str, str] | None:
        """``base_url_env`` when this variant's calls go where that variable points; a CLI
        whose other providers ignore it says None for them, or the proxy, seeing nothing,
        would call a run that reached its model "could not run"."""
        return self.base_url_env

    def _upstream(
        self, endpoint: Endpoint | None, options: CliOptions, variant: VariantSpec
    ) -> tuple[str, str | None] | None:
        """Where the proxy forwards this run's model calls, and the variable that points the CLI
        there (None for an endpoint's run); None when the run bypasses the proxy (no base-URL
        setting, or a login whose servers the CLI picks itself)."""
        if endpoint is not None:
            return endpoint.url, None
        setting = self.base_url_setting(variant)
        if setting is None or options.login:
            return None
        variable, default = setting
        return os.environ.get(variable) or default, variable

    def _launch_and_finish(
        self, run: CliRun, started: float, proxy: ModelProxy | None, base_url: dict[str, str]
    ) -> AgentRun:
        request, binary, version = run.request, run.binary, run.version
        if request.resume_session is not None and can_resume(self):
            asked = dataclasses.replace(run, session_id=request.resume_session)
            earlier = self.earlier_log(asked)
            # A session that left no log here (its run failed early) cannot be continued.
            if earlier is not None:
                run = dataclasses.replace(asked, resumed=earlier)
        if run.options.login:
            self._copy_login(run)
        launch = self.launch(run)
        if base_url:
            launch = dataclasses.replace(launch, env={**launch.env, **base_url})
        help_probe = probe(binary, self.help_args)
        if help_probe.exit_code != 0 and not help_probe.stdout.strip():
            # An npm install whose postinstall never ran leaves a stub like this.
            shown = f"`{binary.name} {' '.join(self.help_args)}`"
            return self._could_not_run(
                started,
                f"{shown} failed: {last_line(help_probe.output) or 'no output'}",
                f"reinstall {self.name}: the executable at {binary} does not run",
                version,
            )
        missing = missing_flags(help_probe.output, self.flags.checkable(launch.argv))
        if missing:
            shown = ", ".join(missing)
            return self._could_not_run(
                started,
                f"{self.name} {version or '(unknown version)'} does not list {shown} in "
                f"`{binary.name} {' '.join(self.help_args)}`",
                f"upgrade `{binary.name}`: this adapter passes {shown}, which version "
                f"{version or '(unknown)'} does not have",
                version,
            )
        setting = run_setting(run, launch, self.flags, (target for _, target in self.login_files))
        result = self._execute(run, launch)
        traffic = proxy.traffic() if proxy is not None else None
        finished = self._finish(run, result, started, traffic)
        return dataclasses.replace(finished, setting=setting, traffic=traffic)

    # For subclasses --------------------------------------------------------------------

    def launch(self, run: CliRun) -> Launch:
        raise NotImplementedError

    def collect(self, run: CliRun, stdout: str, result: ProcessResult) -> Collected:
        raise NotImplementedError

    def check_options(self, variant: VariantSpec, options: CliOptions) -> None:
        """Checks of the CLI's own beyond what its options model says; raise UserError."""

    def earlier_log(self, run: CliRun) -> EarlierLog | None:
        """What the log of the session ``run`` would resume already holds; None when there is
        no such session to continue (adapters that declare ``resume_args`` say)."""
        return None

    def sets_max_turns(self) -> bool:
        """True when the CLI takes a turn limit some other way than a flag (a config key)."""
        return False

    def model_provider(self, run: CliRun, reported: str | None) -> str | None:
        """The provider recorded on each call: the endpoint's, else the CLI's own."""
        if run.endpoint is not None:
            return run.endpoint.provider
        return reported

    # Machinery -------------------------------------------------------------------------

    def _version(self, binary: Path) -> str | None:
        return parse_version(probe(binary, self.version_args))

    def _not_found(self, located: Located) -> tuple[str, str, None]:
        names = " or ".join(f"`{name}`" for name in self.executables)
        if located.how == "PATH":
            install = install_command(self.name)
            fix = (
                f"run `{install}`, put {names} on PATH, or set ${binary_variable(self.name)}"
                if install
                else f"install {self.name} ({names}), put it on PATH, or set "
                f"${binary_variable(self.name)} to its path"
            )
            return (f"{names} not found (no pinned install, not on PATH)", fix, None)
        return (
            f"no executable at the path given by {located.how}",
            f"point {located.how} at the {self.name} executable",
            None,
        )

    def _write_prompt(self, request: AgentRequest) -> Path:
        path = request.prompt_file.with_name(f"{self.name}-prompt.md")
        text = request.prompt.rstrip("\n") + NON_INTERACTIVE_NOTE
        path.write_text(text, encoding="utf-8")
        (request.logs / "agent-prompt.md").write_text(text, encoding="utf-8")
        return path

    def _copy_login(self, run: CliRun) -> None:
        real_home = Path.home()
        for source, target in self.login_files:
            origin = real_home / source
            if origin.is_file():
                destination = run.home / target
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(origin, destination)
                destination.chmod(0o600)

    def _execute(self, run: CliRun, launch: Launch) -> ProcessResult:
        request = run.request
        passthrough = (*launch.passthrough, *run.options.env)
        if run.endpoint is None:
            passthrough = (*passthrough, *self.auth_env)
        extra = {**request.services, **launch.env}
        env = base_environment(request.home, request.tmp, passthrough=passthrough, extra=extra)
        readonly = (run.prompt_file, *request.readonly)
        return request.sandbox.run(
            launch.argv,
            cwd=request.workspace,
            env=env,
            timeout=request.timeout,
            stdout=request.stdout,
            stderr=request.stderr,
            stdin=launch.stdin,
            isolation=Isolation(
                writable=(request.workspace, request.home, request.tmp),
                readonly=readonly,
                tools=install_roots(run.binary),
                network=request.network,
                **self._isolation_extras(run),
            ),
            stop=request.stop,
        )

    def _isolation_extras(self, run: CliRun) -> dict[str, Any]:
        """Settings only the bubblewrap back-end knows, passed when this Isolation has them.

        ``ports``: the endpoint's port on the host's 127.0.0.1, which a sandbox with a network
        of its own relays (some CLIs read the URL from a config file, not the environment).
        ``host_pids``: a CLI that sandboxes its own commands needs the host's /proc.
        """
        known = {item.name for item in dataclasses.fields(Isolation)}
        extras: dict[str, Any] = {}
        port = _loopback_port(run.endpoint.url) if run.endpoint is not None else None
        if "ports" in known and port is not None:
            extras["ports"] = (port,)
        if "host_pids" in known and self.nests_sandbox(run):
            extras["host_pids"] = True
        return extras

    def nests_sandbox(self, run: CliRun) -> bool:
        """True when the CLI will start a sandbox of its own inside ours."""
        return False

    def _finish(
        self, run: CliRun, result: ProcessResult, started: float, traffic: Traffic | None
    ) -> AgentRun:
        request = run.request
        stdout = _read(request.stdout)
        cut_short = result.timed_out or result.stopped or result.exit_code != 0
        try:
            collected = self.collect(run, stdout, result)
        except SessionLogError as exc:
            if not cut_short:
                # A run that says it finished must leave its own log: without it no verdict
                # can be tied to this run.
                raise HarnessError(f"{self.name}: {exc}") from None
            collected = Collected(Transcript(error=str(exc)))
        transcript = collected.transcript
        if collected.session_log is not None:
            transcript = transcript.model_copy(
                update={"session_log": _keep(collected.session_log, request.logs)}
            )
        for extra in collected.extra_logs:
            _keep(extra, request.logs)
        error, hint = self._diagnose(run, result, transcript)
        if error is None and traffic is not None and not traffic.reached_model:
            error = traffic.why_not_reached()
        return AgentRun(
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            stopped=result.stopped,
            seconds=now() - started,
            transcript=transcript,
            error=error,
            hint=hint,
            limit=result.limit,
            version=run.version,
            stdout_record=result.stdout_record,
            stderr_record=result.stderr_record,
        )

    def _diagnose(
        self, run: CliRun, result: ProcessResult, transcript: Transcript
    ) -> tuple[str | None, str | None]:
        """The run's error and, for one that will repeat on every task, the fix.

        Both come from what the CLI printed, which the agent can write too: they explain, they
        never decide. Whether the run got to work is the proxy's to say (protocols/round.py).
        """
        if result.limit is not None:
            return describe(result.limit, run.request.sandbox.settings.limits), None
        if result.timed_out or result.stopped:
            return transcript.error, None
        stderr = _read(run.request.stderr)
        failed = result.exit_code != 0 or transcript.error is not None
        if not failed:
            return None, None
        error = (
            transcript.error or last_line(stderr) or f"{self.name} exited with {result.exit_code}"
        )
        kind = self.exit_kinds.get(result.exit_code or 0) or fatal_kind(
            f"{transcript.error or ''}\n{stderr[-4000:]}"
        )
        hint = None
        if kind == "login":
            hint = self.login_hint.format(binary=run.binary.name)
        elif kind == "version":
            hint = f"upgrade `{run.binary.name}` (found version {run.version or 'unknown'})"
            if install_command(self.name):
                hint += f", or run `{install_command(self.name)}` for the tested version"
        return error, hint

    def _could_not_run(
        self, started: float, error: str, hint: str, version: str | None = None
    ) -> AgentRun:
        return AgentRun(
            exit_code=None,
            timed_out=False,
            seconds=now() - started,
            transcript=Transcript(error=error),
            error=error,
            hint=hint,
            could_not_run=True,
            version=version,
        )


def _loopback_port(url: str) -> int | None:
    parts = urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        return None
    try:
        return parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _keep(log: Path, logs: Path) -> str:
    """Copy a log into the trial folder (unless it is there already); returns its name there."""
    if log.parent == logs:
        return log.name
    target = logs / f"session-{log.name}" if not log.name.startswith("session") else logs / log.name
    shutil.copyfile(log, target)
    return target.name
