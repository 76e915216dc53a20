"""Which candidates' prompts are weak, set aside before any test runs; and the optional rewrite.

Reviewing a prompt reads two diffs from git and runs nothing, so weak candidates are set aside
before validation and cost no test run; ``--keep-weak`` checks them like the others (their
record still says what is weak). Validation still sees at most ``limit`` candidates.

The rewrite is the user's own command (``--prompt-cmd``), run for each kept task on this
machine, outside the sandbox, like the user's editor would be: it reads the commit message on
stdin and prints the new change request. It also gets the gold patch and the notes of what the
tests pin (``HARNESSDRIVE_GOLD_PATCH``, ``HARNESSDRIVE_UNSTATED``), so it can state them. A
command that fails, or prints nothing, leaves the prompt as it was, and the summary says so.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.contents import gold_patch, hidden_test_patch
from harnessdrive.mining.prompt_quality import PromptQuality, assess

REWRITE_TIMEOUT = 300.0
MAX_REQUEST = 20_000


@dataclass(frozen=True)
class Review:
    considered: list[Candidate]
    """The candidates validation gets, newest first."""
    aside: list[tuple[Candidate, PromptQuality]]
    """Weak candidates set aside, newest first."""
    quality: dict[str, PromptQuality] = field(default_factory=dict)
    """The record of every reviewed candidate, by id."""


def review_prompts(
    repo: Path, candidates: Sequence[Candidate], *, limit: int, keep_weak: bool
) -> Review:
    """Review candidates newest first until ``limit`` of them are to be checked."""
    considered: list[Candidate] = []
    aside: list[tuple[Candidate, PromptQuality]] = []
    quality: dict[str, PromptQuality] = {}
    for candidate in candidates:
        if len(considered) >= limit:
            break
        found = assess(
            candidate.subject,
            candidate.body,
            candidate.gold_lines,
            hidden_test_patch(repo, candidate),
            gold_patch(repo, candidate),
        )
        quality[candidate.id] = found
        if found.weak and not keep_weak:
            aside.append((candidate, found))
        else:
            considered.append(candidate)
    return Review(considered, aside, quality)


@dataclass(frozen=True)
class Rewritten:
    request: str | None
    """The new change request; None when the command gave none."""
    error: str = ""


def rewrite_request(
    command: str,
    repo: Path,
    candidate: Candidate,
    quality: PromptQuality | None,
    *,
    timeout: float = REWRITE_TIMEOUT,
) -> Rewritten:
    """Run the user's prompt command for ``candidate``."""
    message = candidate.subject + (f"\n\n{candidate.body}" if candidate.body else "")
    with tempfile.TemporaryDirectory(prefix="harnessdrive-prompt-") as scratch:
        patch = Path(scratch) / "gold.patch"
        patch.write_bytes(gold_patch(repo, candidate))
        env = {
            **os.environ,
            "HARNESSDRIVE_REPO": str(repo),
            "HARNESSDRIVE_COMMIT": candidate.commit,
            "HARNESSDRIVE_GOLD_PATCH": str(patch),
            "HARNESSDRIVE_UNSTATED": "\n".join(quality.unstated if quality else ()),
        }
        try:
            done = subprocess.run(
                command,
                shell=True,
                input=message.encode(),
                capture_output=True,
                env=env,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Rewritten(None, f"the prompt command ran past {timeout:g} s")
        except OSError as exc:
            return Rewritten(None, f"the prompt command could not start: {exc}")
    if done.returncode != 0:
        last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return Rewritten(None, f"the prompt command exited with {done.returncode} {last[0]}")
    text = done.stdout.decode("utf-8", "replace").strip()
    if not text:
        return Rewritten(None, "the prompt command printed nothing")
    return Rewritten(text[:MAX_REQUEST])
