"""What an agent that floods costs: trial folder size and peak memory. Asserts nothing.

    python benchmarks/agent_output.py [--flood output] [--stdout-mb 1024] [--stderr-mb 0]
                                      [--sparse-gb 0] [--sandbox auto]
    python benchmarks/agent_output.py --flood report [--report-mb 150]
    python benchmarks/agent_output.py --flood counterexamples [--answer-kb 1024]

Runs ``harnessdrive run`` on a one-task suite whose only agent (the ``command`` harness) gets
the task wrong and floods:

- ``output``: it prints ``--stdout-mb`` MB to stdout and ``--stderr-mb`` MB to stderr,
  optionally leaving a sparse file of ``--sparse-gb`` GB;
- ``report``: the code it leaves writes a junit report of ``--report-mb`` MB when the grading
  tests exit, over the one pytest wrote;
- ``counterexamples``: on a copy of the demo's skiplist task (a differential task), its
  candidate answers every case with ``--answer-kb`` KB of JSON, so every counterexample kept
  carries a huge answer.

While it runs, a thread samples the resident memory of the harnessdrive process and every
process below it (git, the sandbox, the agent, the tests) every 20 ms. Prints the trial folder's
size, the peak resident memory of harnessdrive alone, of its largest child, and of the whole
tree at once, with the goal each should stay under: the driver under 200 MB and the trial folder
under 20 MB, whatever the agent writes.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import tomli_w

MiB = 1024 * 1024
BUGGY = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


class TreeSampler:
    """Peak resident memory of a process, of its largest descendant, and of the whole tree."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)
        self.own = self.child = self.tree = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.is_set():
            try:
                own = self.root.memory_info().rss
                children = self.root.children(recursive=True)
            except psutil.Error:
                return
            sizes = []
            for proc in children:
                try:
                    sizes.append(proc.memory_info().rss)
                except psutil.Error:
                    continue
            self.own = max(self.own, own)
            self.child = max(self.child, max(sizes, default=0))
            self.tree = max(self.tree, own + sum(sizes))
            time.sleep(0.02)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


REPORT_FLOOD = """
import atexit, os, sys

def add(a, b):
    return a - b

def _flood():
    words = sys.argv + os.environ.get("PYTEST_ADDOPTS", "").split()
    named = [w.split("=", 1)[1] for w in words if w.startswith("--junitxml=")]
    named += [v for v in os.environ.values() if v.endswith(".xml") and os.path.isabs(v)]
    piece = b'<testcase classname="t" name="x"><system-out>' + b"y" * 1048576
    piece += b"</system-out></testcase>"
    for path in named:
        with open(path, "wb") as report:
            report.write(b'<?xml version="1.0"?><testsuites><testsuite>')
            for _ in range({megabytes}):
                report.write(piece)
            report.write(b"</testsuite></testsuites>")

atexit.register(_flood)
"""

ANSWER_FLOOD = """
def skipped(case):
    return ["x" * 1000] * {count}
"""


def write_suite(root: Path, template: str) -> Path:
    suite = root / "suite"
    task = suite / "tasks" / "add"
    (task / "repo" / "tests").mkdir(parents=True)
    (task / "repo" / "calc.py").write_text(BUGGY)
    (task / "repo" / "tests" / "test_add.py").write_text(TEST)
    spec = {
        "id": "add",
        "prompt": "Fix add.",
        "repo": {"path": "repo"},
        "grade": {"command": "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -m pytest -q"},
        "limits": {"agent_timeout": 900},
    }
    (task / "task.toml").write_text(tomli_w.dumps(spec))
    variant = {"harness": "command", "name": "flood", "options": {"template": template}}
    (suite / "suite.toml").write_text(
        tomli_w.dumps({"name": "suite", "tasks": ["tasks/*"], "variants": [variant]})
    )
    return suite


def write_file_template(path: str, content: str) -> str:
    """A command template that writes ``content`` to ``path`` in the workspace."""
    return f"cat > {path} <<'HARNESSDRIVE_FLOOD'\n{content}\nHARNESSDRIVE_FLOOD\n"


def write_differential_suite(root: Path, answer_kb: int) -> Path:
    """A copy of the demo's skiplist task whose agent answers every case with a huge list."""
    from harnessdrive.demo import DEMO_SUITE

    suite = root / "suite"
    shutil.copytree(DEMO_SUITE / "tasks" / "skiplist", suite / "tasks" / "add")
    flood = ANSWER_FLOOD.format(count=max(answer_kb, 1))
    variant = {
        "harness": "command",
        "name": "flood",
        "options": {"template": write_file_template("skiplist/rules.py", flood)},
    }
    (suite / "suite.toml").write_text(
        tomli_w.dumps({"name": "suite", "tasks": ["tasks/*"], "variants": [variant]})
    )
    return suite


def template(stdout_mb: int, stderr_mb: int, sparse_gb: int) -> str:
    lines = ["printf 'def add(a, b):\\n    return 0\\n' > calc.py"]
    if sparse_gb:
        lines.append(f"truncate -s {sparse_gb}G huge.bin")
    if stdout_mb:
        lines.append(f"head -c {stdout_mb * MiB} /dev/zero | tr '\\0' 'o'")
    if stderr_mb:
        lines.append(f"head -c {stderr_mb * MiB} /dev/zero | tr '\\0' 'e' >&2")
    return "\n".join(lines) + "\n"


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--flood", default="output", choices=("output", "report", "counterexamples")
    )
    parser.add_argument("--stdout-mb", type=int, default=1024)
    parser.add_argument("--stderr-mb", type=int, default=0)
    parser.add_argument("--sparse-gb", type=int, default=0)
    parser.add_argument("--report-mb", type=int, default=150)
    parser.add_argument("--answer-kb", type=int, default=1024)
    parser.add_argument("--sandbox", default="auto", choices=("auto", "bwrap", "none"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        if args.flood == "output":
            suite = write_suite(root, template(args.stdout_mb, args.stderr_mb, args.sparse_gb))
            what = f"agent printed {args.stdout_mb} MB to stdout, {args.stderr_mb} MB to stderr"
            what += f", left a {args.sparse_gb} GB sparse file" if args.sparse_gb else ""
        elif args.flood == "report":
            flood = REPORT_FLOOD.format(megabytes=args.report_mb)
            suite = write_suite(root, write_file_template("calc.py", flood))
            what = f"the agent's code wrote a {args.report_mb} MB junit report"
        else:
            suite = write_differential_suite(root, args.answer_kb)
            what = f"the agent's candidate answered every case with {args.answer_kb} KB of JSON"
        results = root / "results"
        command = [sys.executable, "-m", "harnessdrive.cli", "run", str(suite)]
        command += ["--results", str(results), "--sandbox", args.sandbox, "--network", "none"]
        started = time.perf_counter()
        driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        sampler = TreeSampler(driver.pid)
        _, errors = driver.communicate()
        sampler.stop()
        seconds = time.perf_counter() - started
        # Largest resident set of any process we waited for, down the whole tree (kilobytes).
        waited_max = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        if driver.returncode not in (0, 1):  # 1: the trial failed, as it should
            print(errors.decode(errors="replace")[-2000:])
            raise SystemExit(f"the run exited {driver.returncode}")
        (found,) = (results / "trials").glob("**/flood/r1/result.json")
        trial = found.parent
        result = json.loads((trial / "result.json").read_text())
        grading = result["rounds"][0].get("grading") or {}
        trial_mb = folder_size(trial) / MiB
        print(what)
        print(f"outcome: {result['status']} / {result['outcome']} in {seconds:.1f} s")
        if args.flood == "output":
            print(f"recorded stdout: {result['rounds'][0]['agent'].get('stdout')}")
        if args.flood == "counterexamples":
            print(f"counterexamples kept: {len(grading.get('counterexamples', []))}")
        print(f"result.json: {(trial / 'result.json').stat().st_size / MiB:.2f} MB")
        print(f"trial folder: {trial_mb:.1f} MB (goal: under 20 MB; {trial_mb / 20:.2f} of it)")
        print(f"results folder: {folder_size(results) / MiB:.1f} MB")
        own = sampler.own / MiB
        print(
            f"peak resident, harnessdrive alone: {own:.0f} MB "
            f"(goal: under 200 MB; {own / 200:.2f} of it)"
        )
        print(f"peak resident, largest child: {sampler.child / MiB:.0f} MB (sampled)")
        print(f"peak resident, largest process waited for: {waited_max / MiB:.0f} MB (getrusage)")
        print(
            f"peak resident, harnessdrive and all its children at once: "
            f"{sampler.tree / MiB:.0f} MB (goal: under 500 MB)"
        )


if __name__ == "__main__":
    main()
