"""Where everything lives in a results folder. The only place that knows the layout.

<results>/                      default .harnessdrive/ in the current directory
  lock                          pid of the run holding the folder
  index.sqlite                  derived from the trial folders; rebuildable
  inflight/<key>.json           one per agent running now (or killed while running)
  live.json                     what the running trials are doing now (running/live_board.py)
  runs/<run_id>.json            what a run planned, and which attempts it counted
  decisions/<run_id>.json       a run-until-decided run's decisions, derived from its trials
  trials/<suite>@<hash>/<task>/<variant>/r<N>/   the suite's identity: tasks/identity.py
  trials/<suite>/<task>/<variant>/r<N>/          trials recorded before suite identities
    result.json                 written atomically, last
    prompt.md  agent.stdout  agent.stderr  transcript.json  trajectory.json  diff.patch
    cost.json  review.json
    grade-setup.log  grade-visible.log  grade-tests.log  junit-visible.xml  junit-tests.xml
    rounds/<N>/                 round N's files, for a protocol of several rounds
    previous/<attempt>/         earlier attempts (interrupted or not finished)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]")


def safe_name(value: str) -> str:
    """A folder-safe form of a name (model ids can hold ``/`` and ``:``)."""
    cleaned = _UNSAFE.sub("_", value).strip(".")
    return cleaned or "_"


@dataclass(frozen=True)
class TrialPaths:
    root: Path

    @property
    def result(self) -> Path:
        return self.root / "result.json"

    @property
    def prompt(self) -> Path:
        return self.root / "prompt.md"

    @property
    def stdout(self) -> Path:
        return self.root / "agent.stdout"

    @property
    def stderr(self) -> Path:
        return self.root / "agent.stderr"

    @property
    def transcript(self) -> Path:
        return self.root / "transcript.json"

    @property
    def diff(self) -> Path:
        return self.root / "diff.patch"

    @property
    def cost(self) -> Path:
        """The per-call cost ledger of a priced trial."""
        return self.root / "cost.json"

    @property
    def previous(self) -> Path:
        return self.root / "previous"


@dataclass(frozen=True)
class ResultsPaths:
    root: Path

    @property
    def lock(self) -> Path:
        return self.root / "lock"

    @property
    def index(self) -> Path:
        return self.root / "index.sqlite"

    @property
    def inflight(self) -> Path:
        return self.root / "inflight"

    @property
    def live(self) -> Path:
        """What the running trials of the run holding the folder are doing (ephemeral)."""
        return self.root / "live.json"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    @property
    def trials(self) -> Path:
        return self.root / "trials"

    def run_manifest(self, run_id: str) -> Path:
        return self.runs / f"{run_id}.json"

    def run_log(self, run_id: str) -> Path:
        """What the executor's machinery said during a run (Ray's messages, say)."""
        return self.runs / f"{run_id}.log"

    def run_decisions(self, run_id: str) -> Path:
        """A run-until-decided run's decisions (store/decisions_file.py)."""
        return self.root / "decisions" / f"{run_id}.json"

    def trial(self, trial_id: str) -> TrialPaths:
        return TrialPaths(self.trials / trial_id)

    def inflight_record(self, trial_id: str) -> Path:
        return self.inflight / (trial_id.replace("/", "--") + ".json")


def trial_id(suite: str, task: str, variant_label: str, repetition: int) -> str:
    """The stable identity of a trial; also its folder under ``trials/``. ``suite`` is the
    suite's identity, so suites that share a name never share a trial."""
    return "/".join((safe_name(suite), safe_name(task), safe_name(variant_label), f"r{repetition}"))


def legacy_trial_id(trial: str) -> str | None:
    """The id the same trial had before trial ids began with the suite's identity
    (``<suite>/<task>/<variant>/r<N>``); None for an id without an identity."""
    suite, separator, rest = trial.partition("/")
    name, at, _ = suite.partition("@")
    return f"{name}/{rest}" if at and separator else None
