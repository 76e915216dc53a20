"""Which recorded trials count: by default none on a task the audit marked untrusted or invalid.

Every command that scores a results folder (the run's scoreboard, report in every format,
compare and its regression gate) reads each trial's trust from the run that counted it
(store/trust.py) and leaves out the same trials, so the scoreboard, the decisions and the page
count the same tasks. ``--all-tasks`` counts them again and says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from harnessdrive.store.results import TrialResult
from harnessdrive.store.trust import TaskTrust

SHOWN_NAMES = 10
"""How many names a line on tasks not audited lists (the JSON lists them all)."""


class TrustCounting(BaseModel):
    """What the audit left out of a report, and what it could not speak for."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    all_tasks: bool = False
    """``--all-tasks``: the tasks in ``left_out`` were counted all the same."""
    left_out: tuple[TaskTrust, ...] = ()
    """Tasks the audit marked untrusted or invalid, with the exploits or problems."""
    not_audited: tuple[str, ...] = ()
    """Counted tasks no audit speaks for (none ran, or one of another version of the task)."""
    unrecorded: tuple[str, ...] = ()
    """Those of ``not_audited`` recorded by a run from before runs recorded trust."""
    source: Literal["run", "suite"] = "run"
    """Where the trust came from: recorded by the runs, or the suite's audits now (--suite)."""

    @property
    def left_out_names(self) -> frozenset[str]:
        return frozenset(item.task for item in self.left_out)

    def lines(self) -> list[str]:
        """The sentences every format shows."""
        found = []
        where = " (the suite's audits now, --suite)" if self.source == "suite" else ""
        if self.left_out:
            tasks = _tasks(len(self.left_out))
            reasons = "; ".join(f"{item.task} ({_short(item.why())})" for item in self.left_out)
            if self.all_tasks:
                found.append(
                    f"Counted {tasks} the audit marked untrusted or invalid{where}, as "
                    f"--all-tasks asks: {reasons}."
                )
            else:
                found.append(
                    f"Left out {tasks} the audit marked untrusted or invalid{where}: {reasons} "
                    "(fix and check --audit them; --all-tasks counts them)."
                )
        if self.not_audited:
            older = (
                f"; {len(self.unrecorded)} recorded before runs recorded audits"
                if self.unrecorded
                else ""
            )
            found.append(
                f"{_tasks(len(self.not_audited))} not audited, counted{older}: "
                f"{_listed(self.not_audited)} (check --audit audits them)."
            )
        return found


def count_trusted(
    trials: Sequence[TrialResult],
    trust: Mapping[str, TaskTrust | None],
    *,
    all_tasks: bool = False,
    unrun: Iterable[TaskTrust] = (),
    also_left_out: Iterable[TaskTrust] = (),
    source: Literal["run", "suite"] = "run",
) -> tuple[list[TrialResult], TrustCounting]:
    """The trials that count and what was left out. ``trust``: each trial's task's trust by
    trial id, None for a trial whose run recorded none. ``unrun``: left-out tasks the run
    recorded but never ran (a run until decided runs only the tasks that count).
    ``also_left_out``: tasks left out by another side's audit (a baseline's), whose trials
    here go too so the two sides pair on the same tasks."""
    others = {item.task: item for item in also_left_out}
    by_task: dict[str, TaskTrust] = {}
    unrecorded: dict[str, None] = {}
    unaudited: dict[str, None] = {}
    for trial in trials:
        found = trust.get(trial.trial_id)
        if found is None:
            unrecorded[trial.task] = None
        elif found.left_out:
            by_task.setdefault(trial.task, found.model_copy(update={"task": trial.task}))
        elif found.status == "unaudited":
            unaudited[trial.task] = None
    for item in [*others.values(), *unrun]:
        if item.left_out:
            by_task.setdefault(item.task, item)
    left_trials = {
        t.trial_id
        for t in trials
        if ((found := trust.get(t.trial_id)) is not None and found.left_out) or t.task in others
    }
    kept = list(trials) if all_tasks else [t for t in trials if t.trial_id not in left_trials]
    kept_tasks = {t.task for t in kept}
    not_audited = [t for t in {**unrecorded, **unaudited} if t in kept_tasks]
    counting = TrustCounting(
        all_tasks=all_tasks,
        left_out=tuple(by_task[name] for name in sorted(by_task)),
        not_audited=tuple(sorted(not_audited)),
        unrecorded=tuple(sorted(t for t in unrecorded if t in kept_tasks)),
        source=source,
    )
    return kept, counting


def _tasks(count: int) -> str:
    return "1 task" if count == 1 else f"{count} tasks"


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN_NAMES])
    more = len(names) - SHOWN_NAMES
    return f"{shown} and {more} more" if more > 0 else shown


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def merged(first: TrustCounting, second: TrustCounting) -> TrustCounting:
    """Two sides' counting as one (a results folder and its baseline)."""
    left = {item.task: item for item in (*second.left_out, *first.left_out)}
    return first.model_copy(
        update={
            "left_out": tuple(left[name] for name in sorted(left)),
            "not_audited": tuple(sorted({*first.not_audited, *second.not_audited})),
            "unrecorded": tuple(sorted({*first.unrecorded, *second.unrecorded})),
        }
    )
