"""Mining side by side with Harness Lab 0.3.0. Prints times, yields and the ratio; asserts nothing.

Both tools mine the N newest commits of one repository (default 100) with the same test command
and 2 jobs each, alternating when repeated:

    python benchmarks/mining_peer.py REPO [--commits 100] [--repeats 1] [--jobs 2]
        [--test-cmd "PYTHONPATH=src python -m pytest -q"] [--sandbox auto] [--python312 PATH]
        [--harnesslab-venv VENV] [--harnessdrive-jobs N]

Harness Lab (package ``harnesslab`` on PyPI) needs Python 3.12: the benchmark finds one on PATH
or under pyenv, or takes ``--python312``, and installs Harness Lab into a scratch environment
(``--harnesslab-venv`` names an environment that already has it).
The test command runs with a second scratch environment first on PATH (pytest, same Python), so
neither tool builds anything; Harness Lab gets the command with the commit's own test files
appended (its ``{tests}``), harnessdrive the command as it is (the whole suite). harnessdrive
runs its test commands at the lowest CPU priority, so both tools run under ``nice -n 19``: on a
busy machine the priority would otherwise decide the comparison.

Harness Lab's ``--parallelism N`` checks N commits at a time and runs each commit's two test
commands (at the parent and at the commit) at the same time, so up to 2N test processes run
at once; harnessdrive's ``--jobs N`` is N test processes at once. ``--harnessdrive-jobs``
gives harnessdrive another ``--jobs`` (4 against Harness Lab's 2 is the same number of test
processes at once).

``compare_mining`` is the function another benchmark calls for this part.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HARNESS_LAB = "harnesslab==0.3.0"
DEFAULT_TEST_COMMAND = "PYTHONPATH=src python -m pytest -q"
TESTS_PLACEHOLDER = "{tests}"


@dataclass(frozen=True)
class MiningRun:
    tool: str
    seconds: float
    kept: tuple[str, ...]
    """The kept commits (full hashes), newest first."""
    scanned: int


@dataclass
class MiningComparison:
    repo: Path
    commits: int
    test_command: str
    jobs: int
    runs: list[MiningRun] = field(default_factory=list)

    def of(self, tool: str) -> list[MiningRun]:
        return [r for r in self.runs if r.tool == tool]

    def best(self, tool: str) -> float:
        return min(r.seconds for r in self.of(tool))

    def median(self, tool: str) -> float:
        return statistics.median(r.seconds for r in self.of(tool))

    @property
    def ratio(self) -> float:
        """harnessdrive's best time over Harness Lab's."""
        return self.best("harnessdrive") / self.best("harnesslab")

    @property
    def median_ratio(self) -> float:
        return self.median("harnessdrive") / self.median("harnesslab")

    def lines(self) -> list[str]:
        out = [
            f"{self.repo.name}: {self.commits} newest commits, test command {self.test_command!r},"
            f" {self.jobs} jobs each"
        ]
        for tool in ("harnesslab", "harnessdrive"):
            runs = self.of(tool)
            times = ", ".join(f"{r.seconds:.1f}" for r in runs)
            kept = runs[-1].kept
            out.append(
                f"  {tool:12s} {times} s (median {self.median(tool):.1f});"
                f" scanned {runs[-1].scanned}, kept {len(kept)}:"
                f" {' '.join(c[:10] for c in kept)}"
            )
        hl, hd = set(self.of("harnesslab")[-1].kept), set(self.of("harnessdrive")[-1].kept)
        out.append(
            f"  ratio harnessdrive / Harness Lab: best of each {self.ratio:.2f},"
            f" median of each {self.median_ratio:.2f};"
            f" kept by both {len(hl & hd)}, only Harness Lab {len(hl - hd)},"
            f" only harnessdrive {len(hd - hl)}"
        )
        return out


def find_python312(given: str | None = None) -> str:
    """A Python 3.12 that runs: ``given``, a pyenv version, or ``python3.12`` on PATH."""
    root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates = [given] if given else []
    candidates += sorted(glob.glob(f"{root}/versions/3.12*/bin/python3.12"), reverse=True)
    candidates += [shutil.which("python3.12") or ""]
    for candidate in candidates:
        if candidate and _is_python312(candidate):
            return candidate
    raise SystemExit("Harness Lab needs Python 3.12: pass --python312 PATH")


def _is_python312(python: str) -> bool:
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return False
    return done.stdout.strip() == "True"


def make_venv(python: str, folder: Path, *packages: str) -> Path:
    """A scratch environment with ``packages`` (reused when it is already there)."""
    if not (folder / "bin" / "python").is_file():
        subprocess.run([python, "-m", "venv", str(folder)], check=True)
    subprocess.run(
        [str(folder / "bin" / "python"), "-m", "pip", "install", "-q", *packages],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return folder


def newest_commits(repo: Path, count: int) -> list[tuple[str, int]]:
    """(hash, commit time) of the ``count`` newest non-merge commits, newest first."""
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "--no-merges", f"--max-count={count}", "--format=%H %ct"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [(line.split()[0], int(line.split()[1])) for line in out.splitlines() if line]


def run_harness_lab(
    lab: Path, repo: Path, out: Path, commits: int, command: str, jobs: int, env: dict[str, str]
) -> MiningRun:
    shutil.rmtree(out, ignore_errors=True)
    started = time.monotonic()
    subprocess.run(
        ["nice", "-n", "19", str(lab / "bin" / "harnesslab"), "suite", "mine", str(repo),
         "-o", str(out), "--max-commits", str(commits), "--test-command", command,
         "--parallelism", str(jobs)],
        check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    seconds = time.monotonic() - started
    report = json.loads((out / "mining_report.json").read_text(encoding="utf-8"))
    kept = tuple(c["commit"] for c in report["commits"] if c.get("status") == "kept")
    return MiningRun("harnesslab", seconds, kept, int(report["scanned"]))


def run_harnessdrive(
    repo: Path,
    out: Path,
    since: str,
    commits: int,
    command: str,
    jobs: int,
    sandbox: str,
    env: dict[str, str],
) -> MiningRun:
    shutil.rmtree(out, ignore_errors=True)
    started = time.monotonic()
    done = subprocess.run(
        ["nice", "-n", "19", sys.executable, "-m", "harnessdrive", "mine", str(repo),
         "--since", since, "--max", str(commits), "--validate", "--jobs", str(jobs),
         "--test-cmd", command, "--sandbox", sandbox, "-o", str(out), "--json",
         # Harness Lab keeps a commit whatever its message says: the same tasks are compared
         "--keep-weak"],
        check=True, env=env, capture_output=True, text=True,
    )  # fmt: skip
    seconds = time.monotonic() - started
    summary = json.loads(done.stdout)
    kept = tuple(t["commit"] for t in summary["tasks"])
    return MiningRun("harnessdrive", seconds, kept, int(summary["counts"]["commits"]))


def compare_mining(
    repo: Path,
    *,
    scratch: Path,
    commits: int = 100,
    test_command: str = DEFAULT_TEST_COMMAND,
    jobs: int = 2,
    repeats: int = 1,
    sandbox: str = "auto",
    python312: str | None = None,
    harnesslab_venv: Path | None = None,
    harnessdrive_jobs: int | None = None,
) -> MiningComparison:
    """Mine ``repo``'s ``commits`` newest commits with both tools, alternating ``repeats`` times."""
    repo = repo.resolve()
    python = find_python312(python312)
    lab = harnesslab_venv or make_venv(python, scratch / "harnesslab-venv", HARNESS_LAB)
    tools = make_venv(python, scratch / "test-venv", "pytest")
    window = newest_commits(repo, commits + 1)
    # harnessdrive's window is a date; the summary says how many commits it scanned.
    oldest = window[min(commits, len(window)) - 1][1]
    since = time.strftime("%Y-%m-%d", time.gmtime(oldest))
    path = f"{tools / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    # As a user's shell runs them: bytecode is written where the tools let it be.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {"PATH": path, "TZ": "UTC"}
    lab_command = test_command if TESTS_PLACEHOLDER in test_command else test_command + " {tests}"
    whole = test_command.replace(TESTS_PLACEHOLDER, "").strip()
    result = MiningComparison(repo, commits, whole, jobs)
    for index in range(repeats):
        order = ("harnesslab", "harnessdrive") if index % 2 == 0 else ("harnessdrive", "harnesslab")
        for tool in order:
            if tool == "harnesslab":
                out = scratch / "hl-out"
                run = run_harness_lab(lab, repo, out, commits, lab_command, jobs, env)
            else:
                hd_jobs = harnessdrive_jobs or jobs
                run = run_harnessdrive(
                    repo, scratch / "hd-out", since, commits, whole, hd_jobs, sandbox, env
                )
            result.runs.append(run)
            print(f"  {tool}: {run.seconds:.1f} s, kept {len(run.kept)}", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--test-cmd", default=DEFAULT_TEST_COMMAND)
    parser.add_argument("--sandbox", default="auto", choices=["auto", "bwrap", "none"])
    parser.add_argument("--python312")
    parser.add_argument(
        "--harnessdrive-jobs",
        type=int,
        help="harnessdrive's --jobs when it differs from Harness Lab's --parallelism",
    )
    parser.add_argument("--harnesslab-venv", type=Path, help="an environment with Harness Lab")
    parser.add_argument("--scratch", type=Path, help="kept between runs (default: a new folder)")
    args = parser.parse_args()
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="mining-peer-"))
    scratch.mkdir(parents=True, exist_ok=True)
    result = compare_mining(
        args.repo,
        scratch=scratch,
        commits=args.commits,
        test_command=args.test_cmd,
        jobs=args.jobs,
        repeats=args.repeats,
        sandbox=args.sandbox,
        python312=args.python312,
        harnesslab_venv=args.harnesslab_venv,
        harnessdrive_jobs=args.harnessdrive_jobs,
    )
    print("\n".join(result.lines()))


if __name__ == "__main__":
    main()
