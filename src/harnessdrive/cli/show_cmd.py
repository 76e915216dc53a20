"""``harnessdrive show``, ``harnessdrive review`` and ``harnessdrive export``."""

from __future__ import annotations

import getpass
import sys
from typing import Annotated

import typer

from harnessdrive.cli import options as opt
from harnessdrive.errors import UserError
from harnessdrive.report.review_queue import unreviewed_passes
from harnessdrive.report.review_screen import Terminal, review_queue, review_trial
from harnessdrive.report.show import find_trial, trial_trajectory, trial_view
from harnessdrive.report.show_text import render_trial
from harnessdrive.store.results import TrialResult
from harnessdrive.store.review import Decision

TrialArgument = Annotated[
    str, typer.Argument(help="A trial id, its end (task/variant/r1) or a trial folder.")
]


def show(
    trial: TrialArgument,
    results: opt.ResultsOption = opt.DEFAULT_RESULTS,
    json_output: opt.JsonOption = False,
    atif: Annotated[
        bool, typer.Option("--atif", help="Print its transcript as an ATIF trajectory (Harbor).")
    ] = False,
) -> None:
    """Show one trial: prompt, transcript, diff, failing tests, findings, cost and review."""
    paths = find_trial(results, trial)
    if atif:
        sys.stdout.write(trial_trajectory(paths))
        return
    view = trial_view(paths)
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
    yes: Annotated[
        bool, typer.Option("--yes", help="Change a decision already recorded without asking.")
    ] = False,
) -> None:
    """Accept or reject each passing trial's change, its diff first; stored beside its
    result. Keys: a accept, r reject, s skip, v view the whole trial, q quit, ? list them."""
    if accept and reject:
        raise UserError("--accept and --reject ask for two decisions; give one")
    reviewer = _reviewer()
    terminal = Terminal()
    if trial is None:
        if accept or reject:
            raise UserError("--accept or --reject needs the trial it decides on")
        waiting = unreviewed_passes(results)
        if not waiting:
            print("No passing trial waits for a review.")
            return
        done = review_queue(terminal, waiting, reviewer)
        print(f"Reviewed {done} of {len(waiting)} waiting passes.")
        return
    paths = find_trial(results, trial)
    result = TrialResult.model_validate_json(paths.result.read_bytes())
    given: Decision | None = "accepted" if accept else "rejected" if reject else None
    print(review_trial(terminal, paths, result, given, note=note, yes=yes, reviewer=reviewer))


def _reviewer() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""
