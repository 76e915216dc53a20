"""``harnessdrive review``: one passing trial at a time, its diff first, and a decision.

Each screen leads with where the reviewer is in the queue ("Review 3 of 12"), the trial and its
test summary, then the diff (coloured on a terminal), then the keys. On a terminal a screen
longer than the window goes through a pager (``$PAGER``, else ``less -R``). A decision that
would flip one already recorded for the same diff is confirmed first.

Everything shown comes from the trial folder, which the agent wrote: its text is escaped before
any colour is added, so no byte of it reaches the terminal as a control sequence.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TextIO

from harnessdrive.errors import UserError
from harnessdrive.report.show import TrialView, trial_view
from harnessdrive.report.show_text import render_trial, safe_text, tests_line
from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import TrialResult
from harnessdrive.store.review import Decision, Review, read_review, record_review

KEYS: tuple[tuple[str, str], ...] = (
    ("a", "accept"),
    ("r", "reject"),
    ("s", "skip"),
    ("v", "view the whole trial"),
    ("q", "quit"),
    ("?", "list these keys"),
)
"""Each key the prompt takes, with what it does."""

_GREEN, _RED, _CYAN, _BOLD, _RESET = "\x1b[32m", "\x1b[31m", "\x1b[36m", "\x1b[1m", "\x1b[0m"

Answer = tuple[Decision, str] | Literal["skip", "quit"]


@dataclass(frozen=True)
class Place:
    number: int
    total: int


def review_screen(view: TrialView, place: Place | None, *, colour: bool) -> str:
    """The screen for one trial: place and trial, test summary, any earlier review, the diff."""
    where = f"Review {place.number} of {place.total}" if place else "Review"
    lines = [
        _paint(f"{where}: {view.task} · {view.variant} r{view.repetition}", _BOLD, colour),
        f"  {safe_text(view.trial_id)} ({view.outcome}; {view.harness})",
        f"  tests: {tests_line(view)}",
    ]
    if view.review is not None:
        lines.append(f"  already {_decided(view.review)}")
    lines.append("")
    lines.extend(diff_lines(view.diff.text, colour=colour) or ["(no change)"])
    if view.diff.cut:
        lines.append(f"[... cut; the whole diff is {view.diff.file}]")
    return "\n".join(lines) + "\n"


def diff_lines(diff: str, *, colour: bool) -> list[str]:
    """A unified diff's lines, escaped, and coloured when ``colour``: additions green,
    deletions red, hunk heads cyan, file heads bold."""
    shown = []
    for line in safe_text(diff).splitlines():
        if line.startswith(("diff --git", "+++", "---")):
            shown.append(_paint(line, _BOLD, colour))
        elif line.startswith("+"):
            shown.append(_paint(line, _GREEN, colour))
        elif line.startswith("-"):
            shown.append(_paint(line, _RED, colour))
        elif line.startswith("@@"):
            shown.append(_paint(line, _CYAN, colour))
        else:
            shown.append(line)
    return shown


def keys_line() -> str:
    return ", ".join(f"{key} {what}" for key, what in KEYS)


class Terminal:
    """Where a review reads its answers and writes its screens."""

    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        *,
        pager: Callable[[str], bool] | None = None,
    ) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        interactive = self.stdin.isatty() and self.stdout.isatty()
        self.colour = interactive and "NO_COLOR" not in os.environ
        self._pager = pager if pager is not None else (page if interactive else None)

    def show(self, text: str) -> None:
        """``text``, through the pager when it is longer than the window."""
        rows = shutil.get_terminal_size().lines
        if self._pager is None or text.count("\n") < rows - 2 or not self._pager(text):
            self.stdout.write(text)
            self.stdout.flush()

    def ask(self, question: str) -> str | None:
        """The first word of the answer, lower case; None at the end of the input."""
        self.stdout.write(question)
        self.stdout.flush()
        answer = self.stdin.readline()
        return None if not answer else answer.strip()


def page(text: str) -> bool:
    """Show ``text`` through ``$PAGER`` (else ``less -R``); False when no pager would run."""
    command = shlex.split(os.environ.get("PAGER") or "less -R")
    if not command or shutil.which(command[0]) is None:
        return False
    try:
        subprocess.run(command, input=text, text=True, check=False)
    except OSError:
        return False
    return True


def ask_decision(terminal: Terminal, paths: TrialPaths, place: Place | None) -> Answer:
    """Show the trial's screen and read a decision (with an optional note), a skip or a quit
    (also the end of the input)."""
    view = trial_view(paths)
    terminal.show(review_screen(view, place, colour=terminal.colour))
    prompt = "[a]ccept, [r]eject, [s]kip, [v]iew all, [q]uit, [?] keys: "
    while True:
        answer = terminal.ask(prompt)
        if answer is None:
            return "quit"
        key = answer.lower()[:1]
        if key in ("a", "r"):
            note = terminal.ask("note (optional): ")
            return ("accepted" if key == "a" else "rejected", note or "")
        if key == "s":
            return "skip"
        if key == "q":
            return "quit"
        if key == "v":
            terminal.show(render_trial(view))
        elif key == "?":
            terminal.show("".join(f"  {k}  {what}\n" for k, what in KEYS))


def confirmed_flip(terminal: Terminal, earlier: Review | None, decision: Decision) -> bool:
    """Whether ``decision`` may stand: no earlier review of this diff says otherwise, or the
    reviewer confirms the change."""
    if earlier is None or earlier.decision == decision:
        return True
    answer = terminal.ask(f"It is {_decided(earlier)}. Change it to {decision}? [y/N] ")
    return answer is not None and answer.lower().startswith("y")


def review_queue(
    terminal: Terminal,
    waiting: list[tuple[TrialPaths, TrialResult]],
    reviewer: str,
) -> int:
    """Review each waiting pass in turn; returns how many were decided."""
    done = 0
    for number, (paths, result) in enumerate(waiting, start=1):
        answer = ask_decision(terminal, paths, Place(number, len(waiting)))
        if answer == "quit":
            break
        if answer == "skip":
            continue
        decision, note = answer
        if confirmed_flip(terminal, read_review(paths, result), decision):
            record_review(paths, result, decision, note=note, reviewer=reviewer)
            done += 1
    return done


def review_trial(
    terminal: Terminal,
    paths: TrialPaths,
    result: TrialResult,
    decision: Decision | None,
    *,
    note: str = "",
    yes: bool = False,
    reviewer: str = "",
) -> str:
    """Decide on one trial: ``decision`` as given, or asked for on its screen. A decision that
    flips the one recorded for this diff needs ``yes`` when given, and a confirmation when
    asked. Returns the line that says what happened."""
    earlier = read_review(paths, result)
    if decision is not None:
        if earlier is not None and earlier.decision != decision and not yes:
            raise UserError(
                f"{result.trial_id} was {earlier.decision} on {earlier.reviewed[:10]}; "
                f"add --yes to change it to {decision}"
            )
    else:
        answer = ask_decision(terminal, paths, None)
        if isinstance(answer, str):
            return f"{result.trial_id}: no decision"
        decision, given = answer
        note = note or given
        if not (yes or confirmed_flip(terminal, earlier, decision)):
            return f"{result.trial_id}: still {_decided(earlier) if earlier else 'undecided'}"
    record_review(paths, result, decision, note=note, reviewer=reviewer)
    return f"{result.trial_id}: {decision}"


def _decided(review: Review) -> str:
    who = f" by {safe_text(review.reviewer)}" if review.reviewer else ""
    note = f" ({safe_text(review.note)})" if review.note else ""
    return f"{review.decision}{who} on {review.reviewed[:10]}{note}"


def _paint(text: str, style: str, colour: bool) -> str:
    return f"{style}{text}{_RESET}" if colour else text
