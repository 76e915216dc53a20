"""Live progress on a terminal: a summary of what the running trials are doing, a spinner line
per running trial with its phase, and a permanent line per result."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from rich.console import Console, RenderableType
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from harnessdrive.cli.output import stderr
from harnessdrive.running.live_board import RunningTrials
from harnessdrive.running.plan import PlannedTrial
from harnessdrive.running.progress import PlainProgress, describe
from harnessdrive.running.progress import Progress as ProgressSink
from harnessdrive.store.results import TrialResult

_COLORS = {"pass": "green", "fail": "red", "tampered": "magenta", "could": "yellow"}


class _Bars(Progress):
    """Rich's progress lines, under a line that sums up what the running trials do."""

    summary = ""

    def get_renderables(self) -> Iterable[RenderableType]:
        if self.summary:
            yield Text(self.summary, style="bold")
        yield from super().get_renderables()


class LiveProgress:
    def __init__(self, console: Console) -> None:
        self.console = console
        self._bars = _Bars(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._tasks: dict[str, TaskID] = {}
        self._labels: dict[str, str] = {}
        self._bars.start()

    def message(self, text: str) -> None:
        self.console.print(text)

    def trial_started(self, trial: PlannedTrial, number: int, total: int) -> None:
        label = f"[{number}/{total}] {trial.variant.label} on {trial.task.id} (r{trial.repetition})"
        self._tasks[trial.trial_id] = self._bars.add_task(label, total=None)
        self._labels[trial.trial_id] = label

    def trials_running(self, running: RunningTrials) -> None:
        for trial_id, phase in running.trials:
            task = self._tasks.get(trial_id)
            if task is not None:
                label = self._labels.get(trial_id, trial_id)
                self._bars.update(task, description=f"{label}: {phase.describe()}")
        self._bars.summary = running.summary() if running.trials else ""
        self._bars.refresh()

    def trial_finished(self, result: TrialResult, number: int, total: int) -> None:
        self._labels.pop(result.trial_id, None)
        task = self._tasks.pop(result.trial_id, None)
        if task is not None:
            self._bars.remove_task(task)
        text = describe(result)
        color = _COLORS.get(text.split(" ")[0], "")
        self.console.print(
            f"[{number}/{total}] {result.variant_label} on {result.task} (r{result.repetition}): "
            f"[{color}]{text}[/{color}] in {result.seconds.total:.1f}s"
            if color
            else f"[{number}/{total}] {result.variant_label} on {result.task}: {text}",
            highlight=False,
            markup=bool(color),
        )

    def close(self) -> None:
        self._bars.stop()


def progress_for_terminal() -> ProgressSink:
    """Live lines on a terminal; one plain line per event otherwise."""
    console = stderr()
    if console.is_terminal:
        return LiveProgress(console)
    return PlainProgress(sys.stderr)
