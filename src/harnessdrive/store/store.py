"""The results folder: trial folders (the truth) plus the index derived from them."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from harnessdrive.sandbox.sealed import mark_results_folder
from harnessdrive.store import index
from harnessdrive.store.atomic import write_atomic
from harnessdrive.store.inflight import (
    InflightRecord,
    is_our_scratch,
    read_inflight,
    remove_inflight,
    write_inflight,
)
from harnessdrive.store.paths import ResultsPaths, TrialPaths, legacy_trial_id
from harnessdrive.store.results import RESULT_SCHEMA, TrialResult
from harnessdrive.store.schema import refuse_newer

RESULT_FILE = "result.json"


class Store:
    def __init__(self, root: Path) -> None:
        self.paths = ResultsPaths(Path(root))
        self._db: sqlite3.Connection | None = None

    # -- index ---------------------------------------------------------------------------------

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self.paths.root.mkdir(parents=True, exist_ok=True)
            mark_results_folder(self.paths.root)  # no agent's sandbox may ever show it
            self._db = index.connect(self.paths.index)
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def sync_index(self) -> None:
        """Bring the index in line with the trial folders (after a crash, say)."""
        on_disk = dict(self._scan())
        known = {row[0] for row in self.db.execute("SELECT path FROM results")}
        index.delete(self.db, known - set(on_disk))
        rows = []
        for rel, (result, latest) in on_disk.items():
            rows.append(index.row_for(rel, result, latest=latest))
        index.upsert(self.db, rows)

    def rebuild_index(self) -> int:
        """Throw the index away and build it again from the trial folders."""
        self.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.paths.index}{suffix}").unlink(missing_ok=True)
        self.sync_index()
        return int(self.db.execute("SELECT count(*) FROM results").fetchone()[0])

    def _scan(self) -> Iterator[tuple[str, tuple[TrialResult, bool]]]:
        trials = self.paths.trials
        if not trials.is_dir():
            return
        for path in sorted(trials.rglob(RESULT_FILE)):
            result = _load(path)
            if result is None:
                continue
            rel = path.relative_to(trials).as_posix()
            yield rel, (result, "/previous/" not in f"/{rel}")

    # -- results -------------------------------------------------------------------------------

    def trial_paths(self, trial_id: str) -> TrialPaths:
        return self.paths.trial(trial_id)

    def latest(self, trial_id: str) -> TrialResult | None:
        return _load(self.paths.trial(trial_id).result)

    def recorded(self, trial_id: str) -> TrialResult | None:
        """The latest result of a trial; for one with none, the same trial as recorded before
        trial ids held the suite's identity (``trials/<suite>/...``), which a run of the suite
        resumes from. Whether that result stands is for the task's fingerprint to say: it holds
        the task's files and its repository's path, so another suite of the name never matches.
        """
        current = self.latest(trial_id)
        if current is not None:
            return current  # the current attempt is the latest: no earlier one need be read
        _, attempts = self.recorded_attempts(trial_id)
        return attempts[-1] if attempts else None

    def recorded_attempts(self, trial_id: str) -> tuple[str, list[TrialResult]]:
        """:meth:`attempts` of a trial, else of its id before suite identities; and that id."""
        attempts = self.attempts(trial_id)
        if not attempts and (older := self.legacy_attempts(trial_id)) and older[1]:
            return older
        return trial_id, attempts

    def legacy_attempts(self, trial_id: str) -> tuple[str, list[TrialResult]] | None:
        """The id a trial had before suite identities and its attempts recorded under it."""
        legacy = legacy_trial_id(trial_id)
        if legacy is None:
            return None
        return legacy, [r for r in self.attempts(legacy) if r.suite_id is None]

    def attempts(self, trial_id: str) -> list[TrialResult]:
        """Every recorded attempt of a trial, the current one last."""
        paths = self.paths.trial(trial_id)
        found = [
            result
            for number in sorted(self._previous_attempts(paths))
            if (result := _load(paths.previous / str(number) / RESULT_FILE)) is not None
        ]
        current = _load(paths.result)
        return [*found, current] if current is not None else found

    def record(self, result: TrialResult, *, durable: bool = True) -> Path:
        """Write ``result.json`` atomically, then index it; returns the file. Without
        ``durable`` it is not flushed to disk here (the caller does: store/flush.py)."""
        if result.schema_ != RESULT_SCHEMA:
            # What this harnessdrive writes has this schema's shape, whichever file it came from
            # (an in-flight record an older driver left behind, say).
            result = result.revised(schema_=RESULT_SCHEMA)
        paths = self.paths.trial(result.trial_id)
        write_atomic(paths.result, result.to_json() + "\n", durable=durable)
        rel = paths.result.relative_to(self.paths.trials).as_posix()
        index.upsert(self.db, [index.row_for(rel, result, latest=True)])
        return paths.result

    def begin_attempt(self, trial_id: str) -> tuple[TrialPaths, int]:
        """Move an earlier attempt's files aside and return a clean folder and attempt number."""
        paths = self.paths.trial(trial_id)
        paths.root.mkdir(parents=True, exist_ok=True)
        earlier = self._previous_attempts(paths)
        old = _load(paths.result)
        last = max(earlier, default=0)
        leftovers = [p for p in paths.root.iterdir() if p.name != "previous"]
        if not leftovers:
            return paths, last + 1
        # A folder without a result.json is an attempt that never finished: it gets a number too.
        number = old.attempt if old is not None and old.attempt > last else last + 1
        dest = paths.previous / str(number)
        dest.mkdir(parents=True)
        for item in leftovers:
            os.replace(item, dest / item.name)
        if old is not None:
            rel_old = paths.result.relative_to(self.paths.trials).as_posix()
            rel_new = (dest / RESULT_FILE).relative_to(self.paths.trials).as_posix()
            index.delete(self.db, [rel_old])
            index.upsert(self.db, [index.row_for(rel_new, old, latest=False)])
        return paths, number + 1

    def _previous_attempts(self, paths: TrialPaths) -> set[int]:
        if not paths.previous.is_dir():
            return set()
        return {int(p.name) for p in paths.previous.iterdir() if p.name.isdigit()}

    def all_latest(self) -> list[TrialResult]:
        found = []
        for (rel,) in self.db.execute("SELECT path FROM results WHERE latest = 1 ORDER BY path"):
            result = _load(self.paths.trials / rel)
            if result is not None:
                found.append(result)
        return found

    def charged_total(self) -> float:
        """Everything counted toward the spend cap: every attempt, retries included."""
        row = self.db.execute("SELECT coalesce(sum(charged_usd), 0) FROM results").fetchone()
        return float(row[0])

    # -- in-flight -----------------------------------------------------------------------------

    def mark_inflight(self, record: InflightRecord) -> Path:
        path = self.paths.inflight_record(record.trial_id)
        write_inflight(path, record)
        return path

    def clear_inflight(self, path: Path) -> None:
        remove_inflight(path)

    def recover_inflight(self) -> list[str]:
        """Record trials a killed driver left running as ``interrupted``; returns their ids."""
        recovered = []
        for path, record in read_inflight(self.paths.inflight):
            if record is None:
                remove_inflight(path)
                continue
            done = self.latest(record.trial_id)
            if done is None or done.attempt != record.attempt:
                result = record.interrupted.revised(finished=utc_now())
                self.record(result)
                recovered.append(record.trial_id)
            scratch = Path(record.scratch)
            if record.scratch and is_our_scratch(scratch):
                shutil.rmtree(scratch, ignore_errors=True)
            remove_inflight(path)
        return recovered


def recorded_among(found: Mapping[str, TrialResult], trial_id: str) -> TrialResult | None:
    """:meth:`Store.recorded` over results already loaded (``found``: by trial id)."""
    if (result := found.get(trial_id)) is not None:
        return result
    legacy = legacy_trial_id(trial_id)
    older = found.get(legacy) if legacy is not None else None
    return older if older is not None and older.suite_id is None else None


def _load(path: Path) -> TrialResult | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None
    refuse_newer(data, RESULT_SCHEMA, path)
    try:
        return TrialResult.model_validate(data)
    except ValidationError:
        return None


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
