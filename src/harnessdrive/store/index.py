"""The SQLite index of every recorded attempt: derived from the trial folders, always rebuildable.

Only the driver writes it. Schema changes are numbered migrations recorded in ``_migrations``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

from harnessdrive.errors import Setting, UserError
from harnessdrive.store.results import TrialResult

COLUMNS = (
    "path",
    "trial_id",
    "attempt",
    "latest",
    "run_id",
    "suite",
    "task",
    "variant",
    "harness",
    "status",
    "outcome",
    "started",
    "finished",
    "seconds",
    "charged_usd",
    "cost_usd",
    "cost_source",
    "files_changed",
    "lines_changed",
    "visible_passed",
    "visible_total",
    "hidden_passed",
    "hidden_total",
    "findings",
    "score",
    "rounds",
)


def _m001_results(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE results (
            path TEXT PRIMARY KEY,
            trial_id TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            latest INTEGER NOT NULL,
            run_id TEXT,
            suite TEXT NOT NULL,
            task TEXT NOT NULL,
            variant TEXT NOT NULL,
            harness TEXT NOT NULL,
            status TEXT NOT NULL,
            outcome TEXT NOT NULL,
            started TEXT NOT NULL,
            finished TEXT NOT NULL,
            seconds REAL NOT NULL,
            charged_usd REAL NOT NULL,
            cost_usd REAL,
            cost_source TEXT NOT NULL,
            files_changed INTEGER NOT NULL,
            lines_changed INTEGER NOT NULL,
            visible_passed INTEGER,
            visible_total INTEGER,
            hidden_passed INTEGER,
            hidden_total INTEGER,
            findings INTEGER NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX results_trial ON results (trial_id, latest)")


def _m002_score_and_rounds(db: sqlite3.Connection) -> None:
    """Result schema 3: a trial's score and its number of rounds. Rows indexed before are
    filled in by the next sync, which rewrites every row from its ``result.json``."""
    db.execute("ALTER TABLE results ADD COLUMN score REAL")
    db.execute("ALTER TABLE results ADD COLUMN rounds INTEGER")


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _m001_results,
    _m002_score_and_rounds,
)


def connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY)")
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    unknown = done - {migration.__name__ for migration in MIGRATIONS}
    if unknown:
        db.close()
        raise UserError(
            f"{path} was written by a newer harnessdrive (migration {min(unknown)}): upgrade "
            "harnessdrive, or rebuild it from the trial folders",
            settings=(Setting("rebuild_index"),),
        )
    for migration in MIGRATIONS:
        if migration.__name__ not in done:
            with db:
                db.execute("BEGIN")
                migration(db)
                db.execute("INSERT INTO _migrations VALUES (?)", (migration.__name__,))
    return db


def row_for(path: str, result: TrialResult, *, latest: bool) -> tuple[object, ...]:
    grading = result.grading
    visible = grading.visible if grading else None
    hidden = grading.hidden if grading else None
    return (
        path,
        result.trial_id,
        result.attempt,
        int(latest),
        result.run_id,
        result.suite,
        result.task,
        result.variant_label,
        result.harness,
        result.status,
        result.outcome,
        result.started,
        result.finished,
        result.seconds.total,
        result.cost.charged_usd,
        result.cost.usd,
        result.cost.source,
        result.diff.files_changed,
        result.diff.lines_changed,
        visible.passed if visible else None,
        visible.total if visible else None,
        hidden.passed if hidden else None,
        hidden.total if hidden else None,
        len(grading.findings) if grading else 0,
        result.score,
        len(result.rounds),
    )


def upsert(db: sqlite3.Connection, rows: Iterable[tuple[object, ...]]) -> None:
    marks = ", ".join("?" for _ in COLUMNS)
    with db:
        db.executemany(
            f"INSERT OR REPLACE INTO results ({', '.join(COLUMNS)}) VALUES ({marks})", rows
        )


def delete(db: sqlite3.Connection, paths: Iterable[str]) -> None:
    with db:
        db.executemany("DELETE FROM results WHERE path = ?", ((p,) for p in paths))


def dump(db: sqlite3.Connection) -> list[tuple[object, ...]]:
    """Every row in a stable order, for comparing two indexes."""
    return list(db.execute(f"SELECT {', '.join(COLUMNS)} FROM results ORDER BY path"))
