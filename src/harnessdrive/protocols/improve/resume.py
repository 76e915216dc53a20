"""An improvement trial's rounds as plain JSON, and back: its round checkpoint's state.

A round's agent run (with its transcript, so usage and cost still add up), change summary,
verdict and note are kept, and the files of each state a later round starts from (the best
checkpoint, and the last state without ``keep_best``), read from the snapshot's objects: the
workspace they were taken from is gone when the trial resumes.
"""

from __future__ import annotations

import base64
import io
from dataclasses import asdict
from pathlib import Path
from typing import Any

from harnessdrive.grading.verdict import Verdict
from harnessdrive.harnesses.base import AgentRun
from harnessdrive.protocols.base import RoundOutcome
from harnessdrive.protocols.improve.history import RoundEntry
from harnessdrive.transcript.models import Transcript
from harnessdrive.workspace.blobs import blob_reader
from harnessdrive.workspace.changes import GITLINK_MODE, SYMLINK_MODE, Changes, FileChange
from harnessdrive.workspace.placing import place_symlink, remove_entry, symlink_escapes, write_file
from harnessdrive.workspace.snapshot import Snapshot


def outcome_json(outcome: RoundOutcome) -> dict[str, Any]:
    agent = outcome.agent
    return {
        "status": outcome.status,
        "note": outcome.note,
        "verdict": outcome.verdict.model_dump(mode="json"),
        "agent": {
            "exit_code": agent.exit_code,
            "timed_out": agent.timed_out,
            "seconds": agent.seconds,
            "stopped": agent.stopped,
            "error": agent.error,
            "could_not_run": agent.could_not_run,
            "limit": agent.limit,
            "version": agent.version,
            "transcript": agent.transcript.model_dump(mode="json"),
        },
        "changes": {
            "base_tree": outcome.changes.base_tree,
            "tree": outcome.changes.tree,
            "patch_bytes": outcome.changes.patch_bytes,
            "files": [asdict(item) for item in outcome.changes.files],
        },
    }


def outcome_from(data: dict[str, Any]) -> RoundOutcome:
    agent, changes = dict(data["agent"]), data["changes"]
    transcript = Transcript.model_validate(agent.pop("transcript"))
    return RoundOutcome(
        agent=AgentRun(**agent, transcript=transcript),
        changes=Changes(
            base_tree=changes["base_tree"],
            tree=changes["tree"],
            files=tuple(FileChange(**item) for item in changes["files"]),
            patch=b"",
            patch_bytes=changes["patch_bytes"],
        ),
        status=data["status"],
        verdict=Verdict.model_validate(data["verdict"]),
        note=data["note"],
    )


def entry_from(data: dict[str, Any]) -> RoundEntry:
    return RoundEntry(
        number=data["round"],
        status=data["status"],
        state=data["state"],
        value=data["value"],
        samples=tuple(data["samples"]),
        gate=data["gate"],
        best=data["best"],
        evaluator_calls=data["evaluator_calls"],
        note=data["note"],
        resumed=data.get("resumed"),
    )


def state_files(snapshot: Snapshot, changes: Changes) -> list[dict[str, Any]]:
    """Every changed path of ``changes`` with its content, from the snapshot's objects."""
    found: list[dict[str, Any]] = []
    with blob_reader(snapshot.shadow) as blobs:
        for item in changes.files:
            if item.kind == "deleted" or item.new_blob is None or item.new_mode == GITLINK_MODE:
                found.append({"path": item.path, "deleted": item.kind == "deleted"})
                continue
            buffer = io.BytesIO()
            blobs.copy(item.new_blob, buffer)
            found.append(
                {
                    "path": item.path,
                    "mode": item.new_mode,
                    "data": base64.b64encode(buffer.getvalue()).decode("ascii"),
                }
            )
    return found


def restore_files(workspace: Path, files: list[dict[str, Any]]) -> None:
    """Write the saved state's files into ``workspace``, a fresh copy of the base state."""
    for item in files:
        if item.get("deleted"):
            remove_entry(workspace, item["path"])
    for item in files:
        if "data" not in item:
            continue
        data = base64.b64decode(item["data"])
        if item["mode"] == SYMLINK_MODE:
            target = data.decode("utf-8", "surrogateescape")
            if not symlink_escapes(item["path"], target):
                place_symlink(workspace, item["path"], target)
            continue
        write_file(workspace, item["path"], data, executable=item["mode"] == "100755")
