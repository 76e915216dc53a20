"""``harnessdrive mine``: from a repository's history to a validated suite of tasks.

scan the history -> find the test command -> (with validation) check HEAD, then each candidate
with the grader -> write the kept tasks as a suite, plus the summary.

The user's repository is only read. Without validation nothing is written at all.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import Setting, UserError
from harnessdrive.executors.interface import DEFAULT_EXECUTOR
from harnessdrive.executors.registry import create_executor
from harnessdrive.grading.reference_outcomes import RECORD_FILE
from harnessdrive.mining.beside_head import start_head_check, validate_beside_head
from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.checks import CandidateResult, Checker
from harnessdrive.mining.drift import DEFAULT_SAMPLE_EVERY, DriftReport, SampledCandidates
from harnessdrive.mining.environments import EnvironmentStore, needs_for, python_test_command
from harnessdrive.mining.envkeys import Choice
from harnessdrive.mining.history import scan_history
from harnessdrive.mining.journal import Journal, JournaledChecker, fingerprint
from harnessdrive.mining.known_failures import (
    RECORD_AT_HEAD,
    leave_out,
    read_known_failures,
    record_head_failures,
)
from harnessdrive.mining.mined_summary import Finished, finished_summary, utc_now
from harnessdrive.mining.prompt_review import Review, review_prompts, rewrite_request
from harnessdrive.mining.runs import RunQueue
from harnessdrive.mining.since import DEFAULT_SINCE
from harnessdrive.mining.slots import RunSlots
from harnessdrive.mining.suite_folder import (
    default_suite_folder,
    prepare_suite_folder,
    suite_name,
    write_suite,
    write_summary,
)
from harnessdrive.mining.summary import (
    DEFAULT_MAX_TASKS,
    MiningSummary,
    summary_from_scan,
)
from harnessdrive.mining.taskfiles import TaskSettings, retime_task_file, write_task_folder
from harnessdrive.mining.test_command import DetectedCommand, detect_test_command
from harnessdrive.mining.time_limit import TimeLimit
from harnessdrive.mining.validation import HeadCheck, Progress, ValidationOutcome, validate
from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import SandboxKind, get_sandbox
from harnessdrive.sandbox.scratch import make_scratch_root
from harnessdrive.trial.job import WorkerSettings
from harnessdrive.workspace.tree_size import run_footprint

ENVIRONMENTS_FOLDER = "envs"
IN_PROGRESS_PER_SLOT = 2
"""Commits in progress per executor worker."""


@dataclass(frozen=True)
class MineOptions:
    repo: Path = Path(".")
    since: str = DEFAULT_SINCE
    max_tasks: int = DEFAULT_MAX_TASKS
    test_command: str | None = None
    setup_command: str | None = None
    validate: bool = False
    jobs: int = 1
    test_timeout: float | None = None
    """Seconds for one test run; None: derived from HEAD's time (see time_limit.py)."""
    output: Path | None = None
    """The suite folder; default ``<repo>/.harnessdrive/tasks/<repo name>``."""
    reuse_environments: bool = True
    """Build each shared environment once (False: every copy builds its own)."""
    fast_reject: bool = True
    """Run the commit's own test files alone on the parent first."""
    fresh: bool = False
    """Check every commit again, ignoring the journal of an earlier run."""
    sample_every: int = DEFAULT_SAMPLE_EVERY
    """Before the checks, run the whole suite at every Nth candidate's parent (0: never)."""
    known_failures: str | None = None
    """A file of pytest node ids known to fail at HEAD, or ``head`` to record them."""
    rev: str | None = None
    """Mine back from this revision instead of HEAD (its tests must pass, as HEAD's would)."""
    keep_weak: bool = False
    """Check candidates whose prompt is weak too, instead of setting them aside."""
    prompt_command: str | None = None
    """The user's command that rewrites each kept task's change request (stdin to stdout)."""
    extras: tuple[str, ...] | None = None
    """The extras the automatic Python environment installs (None: the project's own choice)."""
    groups: tuple[str, ...] | None = None
    """The dependency groups it installs (None: the project's own choice)."""
    setup_network: bool = False
    """Setup in every copy may reach the package registries (still in the sandbox)."""


@dataclass(frozen=True)
class MineResult:
    summary: MiningSummary
    suite: Path | None
    """The suite folder, when validation wrote one."""


def mine(
    options: MineOptions,
    *,
    sandbox: SandboxKind,
    python: str,
    progress: Progress | None = None,
    stop: StopToken | None = None,
    executor: str = DEFAULT_EXECUTOR,
) -> MineResult:
    """Mine ``options.repo``; with ``options.validate``, write the suite of kept tasks.

    Every test run is a job on one new executor of ``options.jobs`` workers (``executor``
    names a registered kind); the environments are built on this host.
    """
    _check_numbers(options)
    scan = scan_history(options.repo, options.since, rev=options.rev)
    command = resolve_test_command(Path(scan.repo), options.test_command, options.setup_command)
    if not options.validate:
        summary = summary_from_scan(scan, command, max_tasks=options.max_tasks)
        return MineResult(summary.model_copy(update={"created": utc_now()}), None)
    suite = (options.output or default_suite_folder(Path(scan.repo))).resolve()
    prepare_suite_folder(suite)
    stop = stop or StopToken()
    needs = needs_for(
        command.command, options.setup_command, Choice(options.extras, options.groups)
    )
    store = EnvironmentStore(
        suite / ENVIRONMENTS_FOLDER,
        needs,
        sandbox=get_sandbox(sandbox),
        python=python,
        reuse=options.reuse_environments,
        stop=stop,
    )
    limit = TimeLimit(options.test_timeout)
    known: list[str] = []
    if options.known_failures not in (None, RECORD_AT_HEAD):
        known = read_known_failures(Path(options.known_failures))
    settings = TaskSettings(
        test_command=leave_out(command.command, known),
        setup_command=options.setup_command or store.setup_command(),
        test_timeout=limit.seconds,
        test_command_source=command.source,
        shared=(str(store.root),) if store.setup_command() else (),
        setup_network=options.setup_network,
    )
    journal = Journal(suite, _journal_settings(options, settings), fresh=options.fresh)
    if not journal.resumed:
        shutil.rmtree(suite / "logs", ignore_errors=True)
    # Only known changes run (the commits themselves), so copies may go to a memory file system
    # with room; not when the user's setup command installs into every copy.
    footprint = (
        None if options.setup_command else run_footprint([(Path(scan.repo), None)], options.jobs)
    )
    scratch = make_scratch_root("harnessdrive-mine-", footprint=footprint)
    slots = RunSlots(options.jobs)
    worker = WorkerSettings(jobs=options.jobs, sandbox=sandbox, python=python, footprint=footprint)
    runs = RunQueue(create_executor(executor, worker))
    checker = Checker(
        repo=Path(scan.repo),
        settings=settings,
        store=store if needs.any else None,
        runs=runs,
        staging=suite / "staging",
        scratch=scratch,
        logs=suite / "logs",
        stop=stop,
        fast_reject=options.fast_reject,
        slots=slots,
        limit=limit,
    )

    def settled(place: int) -> None:
        slots.close_after(place)
        runs.close_after(place)

    try:
        early: Future[HeadCheck] | None = None
        if options.known_failures != RECORD_AT_HEAD and scan.candidates:
            # HEAD's run goes first, while the prompts are reviewed.
            early = start_head_check(checker, scan.head)
        review = review_prompts(
            Path(scan.repo),
            scan.candidates,
            limit=3 * options.max_tasks,
            keep_weak=options.keep_weak,
        )
        checker = dataclasses.replace(
            checker,
            ranks={c.id: index for index, c in enumerate(review.considered)},
            notes={id_: {"prompt_quality": q.as_metadata()} for id_, q in review.quality.items()},
        )
        if early is not None and not review.considered:
            wait([early])  # nothing to judge by it: its result is not needed, only its end
        if options.known_failures == RECORD_AT_HEAD and review.considered:
            checker, known = record_head_failures(checker, scan.head)
            settings = checker.settings
        head: HeadCheck | None = None
        outcome = ValidationOutcome((), 0.0)
        drift: list[DriftReport] = []

        def sampled_then_checked(held: Progress | None) -> ValidationOutcome:
            considered: Sequence[Candidate] = review.considered
            sampled = None
            if options.sample_every:
                # The candidates the samples cannot skip are checked while they run.
                sampled = SampledCandidates(checker, considered, options.sample_every)
                considered = sampled
            try:
                outcome = validate(
                    considered,
                    JournaledChecker(checker, journal),
                    max_tasks=options.max_tasks,
                    # Twice as many commits in progress as workers: one commit's git work and
                    # copies overlap with another's tests, and no worker idles while a commit
                    # waits for its last runs.
                    jobs=IN_PROGRESS_PER_SLOT * options.jobs,
                    progress=held,
                    settled=settled,
                )
            finally:
                if sampled is not None:  # no sample is submitted after validation ends
                    sampled.settle()
            if sampled is not None:
                drift.append(sampled.report())
            return outcome

        used: set[str] = set()
        if review.considered:
            head, outcome = validate_beside_head(
                checker, scan.head, sampled_then_checked, progress, started=early
            )
            used.update(head.environments)
        kept = outcome.kept
        for result in kept:
            used.update(result.environments)
        rewritten, rewrite_errors = _write_again(options, checker, review, kept)
        settings = checker.current_settings()
        write_suite(
            suite,
            suite_name(Path(scan.repo)),
            f"Tasks mined from the git history of {scan.repo} since {scan.since_description}.",
            [(r.candidate.id, r.folder) for r in kept if r.folder is not None],
        )
        if options.reuse_environments and needs.any:
            store.prune(used)
        summary = finished_summary(
            Finished(
                scan=scan,
                command=command,
                settings=settings,
                head=head,
                outcome=outcome,
                store=store,
                suite=suite,
                review=review,
                drift=drift[0] if drift else None,
                rewritten=rewritten,
                rewrite_errors=rewrite_errors,
                known_failures=known,
            )
        )
        write_summary(suite, summary)
    except BaseException:
        runs.stop()
        raise
    finally:
        runs.executor.close()
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(suite / "staging", ignore_errors=True)
    return MineResult(summary, suite if kept else None)


def resolve_test_command(
    root: Path, given: str | None, setup_command: str | None
) -> DetectedCommand:
    """The test command given, or the detected one (a Python one runs in the copy's ``.venv``)."""
    if given is not None:
        if not given.strip():
            raise UserError("the test command is empty", settings=(Setting("test_command"),))
        return DetectedCommand(given, "--test-cmd")
    found = detect_test_command(root)
    if found is None:
        raise UserError(
            f"found no test command in {root}: give one (the command CI runs is usually"
            " in .github/workflows or the README)",
            settings=(Setting("test_command", "CMD"),),
        )
    if setup_command is None:
        return DetectedCommand(python_test_command(found.command), found.source)
    return found


def _check_numbers(options: MineOptions) -> None:
    if options.max_tasks < 1:
        raise UserError(
            "the number of tasks to keep must be at least 1", settings=(Setting("max_tasks"),)
        )
    if options.jobs < 1:
        raise UserError("the number of jobs must be at least 1", settings=(Setting("jobs"),))
    if options.sample_every < 0:
        raise UserError(
            "the history's sampling interval must be 0 (no samples) or a number of candidates",
            settings=(Setting("sample_every"),),
        )
    if options.setup_command and (options.extras is not None or options.groups is not None):
        raise UserError(
            "extras and dependency groups choose what the automatic environment installs; with"
            " a setup command of your own it decides, so give one or the other",
            settings=(Setting("setup_command"),),
        )
    if options.test_timeout is not None and not options.test_timeout > 0:
        raise UserError(
            "the test timeout must be a positive number of seconds",
            settings=(Setting("test_timeout"),),
        )


def _write_again(
    options: MineOptions, checker: Checker, review: Review, kept: list[CandidateResult]
) -> tuple[set[str], list[str]]:
    """Each kept task's folder written again where it changes: with the time limit derived
    after it was written, or the prompt command's request. Returns (rewritten, errors)."""
    rewritten: set[str] = set()
    errors: list[str] = []
    settings = checker.current_settings()
    for result in kept:
        candidate, folder = result.candidate, result.folder
        if folder is None:
            continue
        request = None
        if options.prompt_command is not None:
            quality = review.quality.get(candidate.id)
            found = rewrite_request(options.prompt_command, checker.repo, candidate, quality)
            request = found.request
            if request is None:
                errors.append(f"{candidate.id}: {found.error}")
        if request is None and settings == checker.settings:
            continue
        retimed = dataclasses.replace(checker.settings, test_timeout=settings.test_timeout)
        if (
            request is None
            and retimed == settings
            and retime_task_file(folder, settings.test_timeout)
        ):
            continue  # only the limit changed: one line, not the folder again from git
        record = folder / RECORD_FILE
        kept_record = record.read_bytes() if record.is_file() else None
        shutil.rmtree(folder)
        notes = checker.notes.get(candidate.id)
        write_task_folder(folder, checker.repo, candidate, settings, request=request, notes=notes)
        if kept_record is not None:  # the hidden files are the same; the record stays true
            record.write_bytes(kept_record)
        if request is not None:
            rewritten.add(candidate.id)
    return rewritten, errors


def _journal_settings(options: MineOptions, settings: TaskSettings) -> str:
    """What a journal's verdicts depend on: the same command with these continues it."""
    return fingerprint(
        {
            "test_command": settings.test_command,
            "setup_command": settings.setup_command,
            "setup_network": settings.setup_network,
            "test_timeout": options.test_timeout,
            "extras": options.extras,
            "groups": options.groups,
            "fast_reject": options.fast_reject,
            "known_failures": options.known_failures,
        }
    )
