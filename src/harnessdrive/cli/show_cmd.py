"""``harnessdrive show``, ``harnessdrive review`` and ``harnessdrive export``."""

from __future__ import annotations

import getpass
import sys
from typing import Annotated, Literal

import typer

from harnessdrive.cli import options as opt
from harnessdrive.errors import UserError
from harnessdrive.report.review_queue import unreviewed_passes
from harnessdrive.report.show import find_trial, trial_view
from harnessdrive.report.show_text import render_trial
from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import TrialResult
from harnessdrive.store.review import Decision, record_review

TrialArgument = Annotated[
    str, typer.Argument(help="A trial id, its end (task/variant/r1) or a trial folder.")
]


def show(
    trial: TrialArgument,
    results: opt.ResultsOption = opt.DEFAULT_RESULTS,
    json_output: opt.JsonOption = False,
) -> None:
    """Show one trial: prompt, transcript, diff, failing tests, findings, cost and review."""
    view = trial_view(find_trial(results, trial))
    sys.stdout.write(view.to_json() + "\n" if json_output else render_trial(view))


def review(
    trial: Annotated[
        str | None,
        typer.Argument(help="The trial to decide on (default: each unreviewed pass in turn)."),
    ] = None,
    results: opt.ResultsOption = opt.DEFAULT_RESULTS,
    accept: Annotated[bool, typer.Option("--accept", help="Accept the trial's change.")] = False,
    reject: Annotated[bool, typer.Option("--reject", help="Reject the trial's change.")] = False,
    note: Annotated[str, typer.Option("--note", metavar="TEXT", help="Why, in a line.")] = "",
) -> None:
    """Accept or reject each passing trial's change; stored beside its result."""
    if accept and reject:
        raise UserError("--accept and --reject ask for two decisions; give one")
    reviewer = _reviewer()
    if trial is not None:
        paths = find_trial(results, trial)
        result = TrialResult.model_validate_json(paths.result.read_bytes())
        if not (accept or reject):
            decided = _ask(paths)
            if decided is None or decided == "skip":
                return
            decision, note = decided[0], note or decided[1]
        else:
            decision = "accepted" if accept else "rejected"
        record_review(paths, result, decision, note=note, reviewer=reviewer)
        print(f"{result.trial_id}: {decision}")
        return
    if accept or reject:
        raise UserError("--accept or --reject needs the trial it decides on")
    waiting = unreviewed_passes(results)
    if not waiting:
        print("No passing trial waits for a review.")
        return
    done = 0
    for paths, result in waiting:
        decided = _ask(paths)
        if decided is None:
            break
        if decided == "skip":
            continue
        record_review(paths, result, decided[0], note=decided[1], reviewer=reviewer)
        done += 1
    print(f"Reviewed {done} of {len(waiting)} waiting passes.")


def _ask(paths: TrialPaths) -> tuple[Decision, str] | Literal["skip"] | None:
    """Show the trial, then read a/r (accept, reject, and a note), s (skip) or q (quit: None,
    as is the end of the input)."""
    sys.stdout.write(render_trial(trial_view(paths)))
    while True:
        sys.stdout.write("accept, reject, skip or quit? [a/r/s/q] ")
        sys.stdout.flush()
        answer = sys.stdin.readline()
        if not answer:
            return None
        word = answer.strip().lower()[:1]
        if word in ("a", "r"):
            sys.stdout.write("note (optional): ")
            sys.stdout.flush()
            return ("accepted" if word == "a" else "rejected", sys.stdin.readline().strip())
        if word == "s":
            return "skip"
        if word == "q":
            return None


def _reviewer() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""
