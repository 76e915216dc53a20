"""A stored CLI run read again from its raw logs, the way its adapter read them live.

A trial folder keeps what the CLI printed (``agent.stdout``) and copies of its session logs
(``session-*``). To derive a transcript again, each log is put back where the CLI wrote it,
under a scratch HOME, and the adapter's own ``collect`` parses stdout and the logs: the same
code, so a metric whose definition changed is computed the new way for old captures. Nothing
is started.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import UserError
from harnessdrive.harnesses.base import AgentRequest
from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.cli_run import CliRun
from harnessdrive.harnesses.cli.endpoint import Endpoint, resolve
from harnessdrive.harnesses.cli.recording import SessionLogError
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.sandbox.runner import PlainSandbox
from harnessdrive.tasks.loading import Task
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Transcript

STDOUT = "agent.stdout"
LOG_PREFIX = "session-"


@dataclass(frozen=True)
class StoredLogs:
    main: Path | None
    """The session log the transcript is bound to (its copy in the trial folder)."""
    extras: tuple[Path, ...]
    """The other logs kept beside it (subagents' transcripts, analytics)."""

    def original_name(self, path: Path) -> str:
        name = path.name
        return name[len(LOG_PREFIX) :] if name.startswith(LOG_PREFIX) else name


@dataclass(frozen=True)
class StoredRun:
    """What the trial recorded about the run, as the adapter's parser needs it."""

    variant: VariantSpec
    workspace: str | None
    """Where the agent worked (paths in the logs are made relative to it)."""
    version: str | None
    repetition: int
    exit_code: int | None
    timed_out: bool
    seconds: float


Placer = Callable[[CliRun, StoredLogs], None]


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def _claude(run: CliRun, logs: StoredLogs) -> None:
    from harnessdrive.harnesses.claude import config_dir

    if logs.main is None:
        return
    project = config_dir(run) / "projects" / "replay"
    _copy(logs.main, project / f"{run.session_id}.jsonl")
    for extra in logs.extras:
        _copy(extra, project / run.session_id / "subagents" / logs.original_name(extra))


def _codex(run: CliRun, logs: StoredLogs) -> None:
    from harnessdrive.harnesses.codex import codex_home

    if logs.main is not None:
        _copy(logs.main, codex_home(run) / "sessions" / "replay" / logs.original_name(logs.main))


def _gemini(run: CliRun, logs: StoredLogs) -> None:
    from harnessdrive.harnesses.gemini import gemini_dir

    if logs.main is None:
        return
    chats = gemini_dir(run) / "tmp" / "replay" / "chats"
    _copy(logs.main, chats / logs.main.name)  # a chat file's own name starts with session-
    for extra in logs.extras:
        _copy(extra, chats / run.session_id / logs.original_name(extra))


def _qwen(run: CliRun, logs: StoredLogs) -> None:
    from harnessdrive.harnesses.qwen import qwen_home

    if logs.main is not None:
        _copy(
            logs.main, qwen_home(run) / "projects" / "replay" / "chats" / f"{run.session_id}.jsonl"
        )


def _pi(run: CliRun, logs: StoredLogs) -> None:
    from harnessdrive.harnesses.pi import session_dir

    if logs.main is not None:
        _copy(logs.main, session_dir(run) / logs.original_name(logs.main))


def _mini(run: CliRun, logs: StoredLogs) -> None:
    from harnessdrive.harnesses.mini_swe_agent import trajectory

    if logs.main is not None:
        _copy(logs.main, trajectory(run))


def _aider(run: CliRun, logs: StoredLogs) -> None:
    from harnessdrive.harnesses.aider import log_dir

    for path in (logs.main, *logs.extras):
        if path is not None:
            _copy(path, log_dir(run) / logs.original_name(path))


def _opencode(run: CliRun, logs: StoredLogs) -> None:
    # opencode keeps its session in a database; the trial kept the session's export, which
    # collect reads back when there is no database.
    if logs.main is not None:
        _copy(logs.main, run.request.logs / logs.main.name)


def _stdout_only(run: CliRun, logs: StoredLogs) -> None:
    """Cursor and Goose: everything is in what the CLI printed."""


PLACERS: dict[str, Placer] = {
    "claude": _claude,
    "codex": _codex,
    "gemini": _gemini,
    "qwen": _qwen,
    "pi": _pi,
    "mini-swe-agent": _mini,
    "aider": _aider,
    "opencode": _opencode,
    "cursor": _stdout_only,
    "goose": _stdout_only,
}


def stored_logs(folder: Path, transcript: Transcript) -> StoredLogs:
    main = folder / transcript.session_log if transcript.session_log else None
    if main is not None and not main.is_file():
        raise UserError(f"{folder}: its session log {transcript.session_log} is gone")
    extras = tuple(p for p in sorted(folder.glob(f"{LOG_PREFIX}*")) if p.is_file() and p != main)
    return StoredLogs(main=main, extras=extras)


def recollect(
    adapter: AgentCli, folder: Path, stored: StoredRun, transcript: Transcript, task: Task
) -> Transcript:
    """The stored run's transcript, derived again from its stdout and session logs by the
    adapter's own parser; a CLI this module cannot place logs for is a UserError."""
    placer = PLACERS.get(adapter.name)
    if placer is None:
        raise UserError(f"replay does not know where {adapter.name} keeps its session logs")
    logs = stored_logs(folder, transcript)
    stdout_file = folder / STDOUT
    stdout = (
        stdout_file.read_text(encoding="utf-8", errors="replace") if stdout_file.is_file() else ""
    )
    with tempfile.TemporaryDirectory(prefix="harnessdrive-replay-") as scratch:
        root = Path(scratch)
        for name in ("home", "tmp", "logs"):
            (root / name).mkdir()
        workspace = Path(stored.workspace) if stored.workspace else root / "workspace"
        options = adapter.parse_options(stored.variant)
        request = AgentRequest(
            task=task,
            variant=stored.variant,
            prompt=task.prompt,
            prompt_file=root / "prompt.md",
            workspace=workspace,
            home=root / "home",
            tmp=root / "tmp",
            logs=root / "logs",
            timeout=0.0,
            sandbox=PlainSandbox(),
            network="none",
            python="python3",
            repetition=stored.repetition,
        )
        run = CliRun(
            request=request,
            binary=Path(adapter.executables[0] if adapter.executables else adapter.name),
            version=stored.version,
            endpoint=_endpoint(options.endpoint, adapter, task.id),
            prompt_file=root / "prompt.md",
            session_id=transcript.session_id or "",
            options=options,
        )
        placer(run, logs)
        ended = ProcessResult(
            exit_code=stored.exit_code, timed_out=stored.timed_out, seconds=stored.seconds
        )
        try:
            collected = adapter.collect(run, stdout, ended)
        except SessionLogError as exc:
            raise UserError(f"{folder}: the stored logs do not read back: {exc}") from None
    session_log = transcript.session_log if collected.session_log is not None else None
    return collected.transcript.model_copy(update={"session_log": session_log})


def _endpoint(spec: object, adapter: AgentCli, task_id: str) -> Endpoint | None:
    """The endpoint the run used, for the provider each call is recorded under; a key that is
    not set now is not needed, as nothing is sent."""
    from harnessdrive.harnesses.cli.endpoint import EndpointSpec

    if not isinstance(spec, EndpointSpec):
        return None
    try:
        return resolve(spec, adapter.protocol, task_id)
    except UserError:
        return Endpoint(url="", api_key="", provider=spec.provider, max_retries=spec.max_retries)
