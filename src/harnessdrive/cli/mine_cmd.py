"""``harnessdrive mine``: tasks from a repository's own git history."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from harnessdrive.audit.record import TaskAudit
from harnessdrive.cli import options as opt
from harnessdrive.cli.audit_view import show_audit, with_audit
from harnessdrive.errors import UserError
from harnessdrive.mining.checks import CandidateResult
from harnessdrive.mining.drift import DEFAULT_SAMPLE_EVERY
from harnessdrive.mining.mine import MineOptions, mine
from harnessdrive.mining.since import DEFAULT_SINCE
from harnessdrive.mining.summary import (
    DEFAULT_MAX_TASKS,
    format_duration,
    render_summary_json,
    render_summary_markdown,
)
from harnessdrive.tasks.loading import load_suite

EXIT_INTERRUPTED = 130


def mine_command(
    repo: Annotated[Path, typer.Argument(help="The git repository (default: here).")] = Path("."),
    since: Annotated[
        str, typer.Option("--since", help="How far back: days (365d) or a date (2026-01-15).")
    ] = DEFAULT_SINCE,
    max_tasks: Annotated[int, typer.Option("--max", help="Tasks to keep.")] = DEFAULT_MAX_TASKS,
    sample_every: Annotated[
        int,
        typer.Option(
            "--sample-every",
            help="Before the checks, run the whole suite at every Nth candidate's parent to find"
            " stretches of history that fail on today's toolchain, and skip them (0: never).",
        ),
    ] = DEFAULT_SAMPLE_EVERY,
    known_failures: Annotated[
        str | None,
        typer.Option(
            "--known-failures",
            help="Tests known to fail at HEAD, left out of the pytest command: a file of node"
            " ids, one a line, or 'head' to record HEAD's failures.",
        ),
    ] = None,
    rev: Annotated[
        str | None,
        typer.Option(
            "--rev",
            help="Mine back from this branch, tag or commit instead of HEAD (days in --since"
            " count back from its date).",
        ),
    ] = None,
    test_cmd: Annotated[
        str | None,
        typer.Option("--test-cmd", help="The command that runs the tests (default: detected)."),
    ] = None,
    setup_cmd: Annotated[
        str | None,
        typer.Option(
            "--setup-cmd",
            help="Run in every fresh copy before the tests, in the sandbox, without network"
            " unless --setup-network. Default: shared environments built from the project's"
            " own manifests (extras, dependency groups, requirements files, tox and nox).",
        ),
    ] = None,
    setup_network: Annotated[
        bool,
        typer.Option(
            "--setup-network",
            help="Let setup reach the package registries (still in the sandbox; it installs"
            " into the copy). Written into every mined task, so check and run allow it too.",
        ),
    ] = False,
    extras: Annotated[
        str | None,
        typer.Option(
            "--extras",
            help="Extras the automatic Python environment installs, comma-separated ('' for"
            " none). Default: every extra not for docs, linters or releases, and tox's.",
        ),
    ] = None,
    groups: Annotated[
        str | None,
        typer.Option(
            "--groups",
            help="Dependency groups (PEP 735) it installs, comma-separated ('' for none)."
            " Default: chosen as the extras are.",
        ),
    ] = None,
    validate: Annotated[
        bool,
        typer.Option(
            "--validate", help="Keep only commits whose tests fail before and pass after, twice."
        ),
    ] = False,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", help="Test runs at a time (and environment builds).")
    ] = 1,
    test_timeout: Annotated[
        float | None,
        typer.Option(
            "--test-timeout",
            help="Seconds for one run of the test command (default: 600 until HEAD has passed,"
            " then ten times HEAD's time, at least 60).",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="The suite folder (default: .harnessdrive/tasks/<name> in the repository).",
        ),
    ] = None,
    keep_weak: Annotated[
        bool,
        typer.Option(
            "--keep-weak",
            help="Check commits whose prompt is too weak to grade fairly too (empty, merge"
            " boilerplate, a bare link, ...) instead of setting them aside.",
        ),
    ] = False,
    prompt_cmd: Annotated[
        str | None,
        typer.Option(
            "--prompt-cmd",
            help="Your command that rewrites each kept task's request: the commit message on"
            " stdin, the new request on stdout (runs on this machine, outside the sandbox).",
        ),
    ] = None,
    fresh: Annotated[
        bool,
        typer.Option("--fresh", help="Check every commit again, ignoring the journal."),
    ] = False,
    audit_tasks: Annotated[
        bool,
        typer.Option(
            "--audit",
            help="With --validate: run the exploit library on every task written and record"
            " which can be trusted (audit.json beside each, as check --audit does).",
        ),
    ] = False,
    sandbox: opt.SandboxOption = "auto",
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Mine tasks from your git history; with --validate, write them as a suite."""
    if audit_tasks and not validate:
        raise UserError("--audit audits the suite --validate writes; add --validate")
    options = MineOptions(
        repo=repo,
        since=since,
        max_tasks=max_tasks,
        rev=rev,
        known_failures=known_failures,
        sample_every=sample_every,
        test_command=test_cmd,
        setup_command=setup_cmd,
        setup_network=setup_network,
        extras=_names(extras),
        groups=_names(groups),
        validate=validate,
        jobs=jobs,
        test_timeout=test_timeout,
        output=output,
        fresh=fresh,
        keep_weak=keep_weak,
        prompt_command=prompt_cmd,
    )
    try:
        with _signals_stop():
            result = mine(
                options,
                sandbox=opt.sandbox_kind(sandbox),
                python=sys.executable,
                progress=_progress,
            )
    except KeyboardInterrupt:
        print(
            "Stopped. The tests in progress were ended and their copies removed; no suite was"
            " written. Run the same command again to continue: the commits checked so far are"
            " in the suite folder's journal.jsonl (--fresh starts over).",
            file=sys.stderr,
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    audits: list[TaskAudit] = []
    if audit_tasks and result.suite is not None:
        # As check --audit: the self-test's validity problems (the rewritten reference, a
        # commit that changed no code) count against each task's trust too.
        from harnessdrive.audit.runner import check_and_audit  # loads the exploit library

        _, audits = check_and_audit(
            load_suite(result.suite),
            logs=result.suite / "logs" / "check",
            jobs=max(jobs, 1),
            sandbox=opt.sandbox_kind(sandbox),
            python=sys.executable,
        )
    if json_output:
        sys.stdout.write(with_audit(render_summary_json(result.summary), audits))
    else:
        sys.stdout.write(render_summary_markdown(result.summary))
        if audits:
            show_audit(audits)


def _names(given: str | None) -> tuple[str, ...] | None:
    if given is None:
        return None
    return tuple(name.strip() for name in given.split(",") if name.strip())


def _progress(number: int, total: int, result: CandidateResult) -> None:
    candidate = result.candidate
    verdict: str = "kept" if result.reason is None else result.reason
    if result.resumed:
        verdict += ", from the journal"
    subject = candidate.subject if len(candidate.subject) <= 60 else candidate.subject[:57] + "..."
    print(
        f"[{number}/{total}] {candidate.commit[:7]} {subject}: {verdict}"
        f" ({format_duration(result.seconds)})",
        file=sys.stderr,
        flush=True,
    )


@contextmanager
def _signals_stop() -> Iterator[None]:
    """SIGTERM and SIGHUP stop mining the way Ctrl-C does: copies removed, exit 130."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
