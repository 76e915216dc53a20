"""The one error hierarchy of harnessdrive.

    HarnessdriveError                  base of everything we raise on purpose
    ├── UserError                      bad input; the CLI prints one line and exits 2
    │   ├── TaskFormatError            a task.toml or suite.toml that does not validate
    │   ├── UnknownHarnessError        a harness name nobody registered
    │   ├── LockedError                another run holds the results folder
    │   ├── BudgetError                a spend cap that is missing or too small
    │   └── PluginError                a plugin that cannot load or registers a name twice
    ├── WorkspaceError                 a fresh copy could not be built or read
    │   └── ChangeError                the agent's change cannot be carried into a copy
    │       └── AgentDataError         data the agent can influence is malformed or over a bound
    ├── SandboxError                   a process could not be started as asked
    ├── GradingError                   the grader could not evaluate (never a pass)
    │   └── SetupFailedError           the setup commands failed in the grading copy
    └── HarnessError                   an adapter could not drive its CLI
        └── CouldNotRunError           a failure that repeats on every task (login, version)

Anything else that escapes is a bug and keeps its traceback.

A message says what is wrong in the library's own terms; a :class:`UserError` also names the
settings that fix it (:class:`Setting`), which each front end shows its own way (the CLI: as its
flags).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

SETTING_NAMES = frozenset(
    {
        "allow_unpriced",
        "harnesses",
        "jobs",
        "known_failures",
        "margin",
        "max_tasks",
        "max_usd",
        "models",
        "price_files",
        "rebuild_index",
        "repeat",
        "results",
        "sample_every",
        "sandbox",
        "setup_command",
        "show",
        "since",
        "test_command",
        "test_timeout",
        "validate",
    }
)
"""Every setting an error or a fix may name; a front end maps each to its own spelling."""


@dataclass(frozen=True)
class Setting:
    """A setting that fixes a problem, by its library name, and the value to give it, if known."""

    name: str
    value: str = ""

    def __post_init__(self) -> None:
        if self.name not in SETTING_NAMES:
            raise ValueError(f"unknown setting {self.name!r}")


class HarnessdriveError(Exception):
    """Base class of every error harnessdrive raises on purpose."""


class UserError(HarnessdriveError):
    """Bad input from the person at the keyboard: shown as one line, exit code 2."""

    def __init__(self, message: str, *, settings: Sequence[Setting] = ()) -> None:
        super().__init__(message)
        self.settings = tuple(settings)
        """The settings that fix it; the message itself never names a front end's flag."""


class TaskFormatError(UserError):
    """A task or suite file that does not validate."""


class UnknownHarnessError(UserError):
    """A harness name that no adapter registered."""


class LockedError(UserError):
    """Another live run holds the results folder."""


class BudgetError(UserError):
    """A spend cap that is missing, zero, or cannot cover the plan."""


class PluginError(UserError):
    """A plugin that cannot be loaded, or registers something wrong or twice."""


class WorkspaceError(HarnessdriveError):
    """A fresh copy of a repository could not be built, read or diffed."""


class ChangeError(WorkspaceError):
    """What the agent left cannot be read as a change or written into a grading copy.

    Caused by the agent's content, so it counts against the agent (a fail), never as a
    failure of the machinery.
    """


class AgentDataError(ChangeError):
    """Data the agent can influence (a settings file, a test report, a worker's answer) is
    malformed, too deep or too big to read: the agent's outcome, never the machinery's."""


class SandboxError(HarnessdriveError):
    """A process could not be started the way it was asked for."""


class ImageError(UserError):
    """An image environment cannot be had: not found, not unpackable, no tool to build it."""


class GradingError(HarnessdriveError):
    """The grader could not evaluate. Such a trial is never a pass."""


class SetupFailedError(GradingError):
    """The task's setup commands failed in the grading copy, before any test ran."""


class HarnessError(HarnessdriveError):
    """An adapter could not drive its agent CLI."""


class CouldNotRunError(HarnessError):
    """A harness failure that will repeat on every task, with a hint to fix it."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the known name closest to a mistyped one, else ``""``."""
    import difflib  # only an error message needs it; keep it off the start-up path

    by_case = {str(k).lower(): str(k) for k in known}  # REFERENCE means reference
    close = difflib.get_close_matches(name.lower(), list(by_case), n=1, cutoff=0.6)
    return f" (did you mean {by_case[close[0]]!r}?)" if close else ""
