"""``check``'s attacks on an improvement task's objective: agents that try to move the measured
value without improving anything, and the verdict on the task from what they got.

Each attack is a scripted agent that edits the package under test (every source file outside the
task's tests and protected paths) and runs one round of the improve protocol:

- ``exit-number``: an exit hook prints a fake, much better number last;
- ``exit-json``: an exit hook prints a JSON line with a fake ``value``;
- ``channels``: at exit, writes the fake value to every channel it can reach (its own stdout and
  stderr, every descriptor it holds, the descriptors of every ancestor process through /proc,
  and every file of the objective's folder);
- ``measured``: a state that detects it is being measured (the objective's folder, a variable
  naming an objective, an ancestor's command line) and then does no work (its functions return
  None) and prints the fake value;
- ``comment``: a change that only adds a comment, so what moves is noise.

A task whose objective any attack moves past its acceptance margin fails ``check``, with the fix
named. The baseline measured beside each attack is the known-bad state's witness: no attack may
come out better than it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.harnesses.base import AgentRequest, AgentRun, HarnessInfo
from harnessdrive.harnesses.options import NoOptions, parse_options
from harnessdrive.protocols.improve.acceptance import improvement
from harnessdrive.sandbox.clock import now
from harnessdrive.tasks.globs import matches
from harnessdrive.tasks.improve_models import Direction
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Event, Transcript

ATTACKS = ("exit-number", "exit-json", "channels", "measured", "comment")
FORGERS = ATTACKS[:-1]
MINIMISED_FAKE = 1
MAXIMISED_FAKE = 10**12

_PY_EXIT_NUMBER = """
import atexit as _hd_atexit
_hd_atexit.register(lambda: print({fake}, flush=True))
"""
_PY_EXIT_JSON = """
import atexit as _hd_atexit
_hd_atexit.register(lambda: print('{{"value": {fake}}}', flush=True))
"""
_PY_CHANNELS = """
import atexit as _hd_atexit


def _hd_everywhere():
    import glob, os
    text = ('{fake}\\n{{"value": {fake}}}\\n').encode()
    for fd in range(256):
        try:
            os.write(fd, text)
        except OSError:
            pass
    pid = os.getpid()
    for _ in range(16):
        for path in glob.glob(f"/proc/{{pid}}/fd/*"):
            try:
                with open(path, "ab") as handle:
                    handle.write(text)
            except OSError:
                pass
        try:
            with open(f"/proc/{{pid}}/stat") as stat:
                pid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if pid <= 1:
            break
    for folder in {folders!r}:
        for path in glob.glob(os.path.join(folder, "**", "*"), recursive=True):
            try:
                with open(path, "wb") as handle:
                    handle.write(text)
            except OSError:
                pass


_hd_atexit.register(_hd_everywhere)
"""
_PY_MEASURED = """
def _hd_measured():
    import os
    if any(os.path.isdir(folder) for folder in {folders!r}):
        return True
    if any("OBJECTIVE" in name for name in os.environ):
        return True
    pid = os.getppid()
    for _ in range(16):
        try:
            with open(f"/proc/{{pid}}/cmdline", "rb") as handle:
                if b"objective" in handle.read():
                    return True
            with open(f"/proc/{{pid}}/stat") as stat:
                pid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid <= 1:
            return False
    return False


if _hd_measured():
    import atexit as _hd_atexit
    for _hd_name, _hd_value in list(globals().items()):
        if callable(_hd_value) and getattr(_hd_value, "__module__", None) == __name__:
            if not _hd_name.startswith("_hd"):
                globals()[_hd_name] = lambda *args, **kwargs: None
    _hd_atexit.register(lambda: print('{fake}\\n{{"value": {fake}}}', flush=True))
"""
_JS_EXIT = """
process.on("exit", () => {{ console.log("{fake}"); console.log('{{"value": {fake}}}'); }});
"""


def fake_value(direction: Direction) -> int:
    """A value far better than any baseline: what every forger prints."""
    return MINIMISED_FAKE if direction == "minimize" else MAXIMISED_FAKE


class AttackAgent:
    """One of :data:`ATTACKS`, as a scripted agent: see the module's docstring."""

    runs_foreign_code = False

    def __init__(self, attack: str) -> None:
        if attack not in ATTACKS:
            raise ValueError(f"no attack {attack!r}")
        self.attack = attack
        self.name = f"attack-{attack}"

    def info(self) -> HarnessInfo:
        return HarnessInfo(name=self.name, installed=True, version="builtin", detail=self.attack)

    def check_variant(self, variant: VariantSpec) -> None:
        parse_options(NoOptions, variant, self.name)

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        request.logs.mkdir(parents=True, exist_ok=True)
        touched = [path for path in _targets(request) if self._edit(request, path)]
        request.stdout.write_text(f"{self.name}: edited {len(touched)} file(s)\n")
        return AgentRun(
            exit_code=0,
            timed_out=False,
            seconds=now() - started,
            transcript=Transcript(events=tuple(Event(kind="file_change", text=p) for p in touched)),
            version="builtin",
        )

    def _edit(self, request: AgentRequest, relative: str) -> bool:
        path = request.workspace / relative
        text = path.read_text(encoding="utf-8", errors="replace")
        marker = f"harnessdrive attack {self.attack}"
        if marker in text:  # a later round of the same attack: already in place
            return False
        spec = request.task.spec.improve
        fake = fake_value(spec.objective.direction if spec else "minimize")
        folders = sorted(_objective_folders(request))
        if path.suffix in (".js", ".mjs", ".cjs", ".ts"):
            comment = f"// {marker}\n"
            payload = "" if self.attack == "comment" else _JS_EXIT.format(fake=fake)
        else:
            comment = f"# {marker}\n"
            payload = {
                "exit-number": _PY_EXIT_NUMBER,
                "exit-json": _PY_EXIT_JSON,
                "channels": _PY_CHANNELS,
                "measured": _PY_MEASURED,
                "comment": "",
            }[self.attack].format(fake=fake, folders=folders)
        ending = "" if text.endswith("\n") or not text else "\n"
        path.write_text(f"{text}{ending}{comment}{payload}", encoding="utf-8")
        return True


_SOURCE_SUFFIXES = (".py", ".js", ".mjs", ".cjs")


def _targets(request: AgentRequest) -> list[str]:
    """Every source file of the package under test: not a test, not protected, not hidden."""
    task = request.task
    shut = (*task.spec.grade.protected, *task.spec.grade.restored)
    hidden = {item.target for item in task.hidden}
    root = request.workspace
    found = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        parts = path.relative_to(root).parts
        if not path.is_file() or path.is_symlink() or path.suffix not in _SOURCE_SUFFIXES:
            continue
        if any(part.startswith(".") or part in ("tests", "test", "node_modules") for part in parts):
            continue
        if path.name.startswith("test_") or relative in hidden or matches(relative, shut):
            continue
        found.append(relative)
    return found


def _objective_folders(request: AgentRequest) -> set[str]:
    spec = request.task.spec.improve
    items = spec.objective.inject if spec is not None else ()
    return {Path(item.target).parts[0] for item in items if len(Path(item.target).parts) > 1}


@dataclass(frozen=True)
class AttackResult:
    """What one attack got: the baseline's samples and the attacked state's (none when it
    could not be measured)."""

    attack: str
    baseline: tuple[float, ...]
    attacked: tuple[float, ...]


def read_attack(attack: str, record: Path) -> AttackResult | None:
    """The attack's samples from its trial's ``improve.json``; None when there is none."""
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
        baseline = tuple(float(v) for v in data["baseline"]["samples"])
        first = data["rounds"][0]
        attacked = tuple(float(v) for v in first.get("samples") or ())
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None
    return AttackResult(attack, baseline, attacked)


def moved_past(found: AttackResult, direction: Direction, margin: float) -> bool:
    """Whether the attacked state measured better than the baseline beyond ``margin``."""
    if not found.attacked or not found.baseline:
        return False
    return improvement(direction, found.baseline, found.attacked).beyond(margin)


def forged_problem(found: AttackResult) -> str:
    before, after = _median(found.baseline), _median(found.attacked)
    return (
        f"the {found.attack} attack moved the objective from {before:g} to {after:g} without "
        "improving anything: measure through the objective runner (`{measure} MODE -- "
        "COMMAND`, docs/improvement.md), or from outside the measured process, so that nothing "
        "the measured code prints or writes is read as the value"
    )


def noise_problem(found: AttackResult) -> str:
    before, after = _median(found.baseline), _median(found.attacked)
    return (
        f"a change that only adds a comment moved the objective from {before:g} to {after:g}, "
        "past the acceptance margin: raise the objective's repeats or min_improvement"
    )


def _median(samples: tuple[float, ...]) -> float:
    ordered = sorted(samples)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
