"""Building a test environment where it is to live: a virtual environment with what the
project's manifests ask for (or exactly what ``uv.lock`` pins), or ``node_modules`` from the
lockfile. Part of the setup script (:mod:`harnessdrive.mining.envsetup`): standard library only.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

if __package__:
    from harnessdrive.mining import envkeys, pymanifests
else:  # run as a script, beside envsetup.py
    import envkeys  # type: ignore[import-not-found, no-redef]
    import pymanifests  # type: ignore[import-not-found, no-redef]


def _run(argv: list[str], cwd: Path) -> None:
    print("$ " + " ".join(argv), flush=True)
    result = subprocess.run(argv, cwd=cwd, check=False)
    if result.returncode != 0:
        raise envkeys.SetupFailed(f"{' '.join(argv[:4])} ... exited with {result.returncode}")


def _pip(env: Path) -> list[str]:
    """pip for ``env``: this interpreter's pip aimed at it (fast), else pip installed into it."""
    python = str(envkeys.env_python(env))
    if importlib.util.find_spec("pip") is not None:
        import pip

        version = tuple(int(p) for p in re.findall(r"\d+", pip.__version__)[:2])
        if version >= (22, 3):  # the first pip with --python
            return [sys.executable, "-m", "pip", "--python", python]
    _run([python, "-m", "ensurepip", "--default-pip"], env)
    return [python, "-m", "pip"]


def _uv() -> str | None:
    """uv beside this interpreter (installed into the same environment) or on PATH."""
    beside = Path(sys.executable).parent / "uv"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("uv")


def _sync_with_uv(root: Path, env: Path, uv: str, choice: envkeys.Choice) -> None:
    """Exactly what uv.lock pins, with the chosen extras and groups, into ``env``."""
    argv = [uv, "sync", "--frozen", "--no-progress", "--python", sys.executable]
    for extra in choice.extras_for(root):
        argv += ["--extra", extra]
    for group in choice.groups_for(root):
        argv += ["--group", group]
    print("$ UV_PROJECT_ENVIRONMENT=" + str(env) + " " + " ".join(argv), flush=True)
    done = subprocess.run(argv, cwd=root, env={**os.environ, "UV_PROJECT_ENVIRONMENT": str(env)})
    if done.returncode != 0:
        raise envkeys.SetupFailed(f"uv sync --frozen ... exited with {done.returncode}")


def build_python(
    root: Path, env: Path, *, pytest: bool, choice: envkeys.Choice = envkeys.DEFAULT_CHOICE
) -> None:
    """A virtual environment at ``env`` with what the project in ``root`` needs for its tests.

    A project with a ``uv.lock`` gets exactly what it pins (``uv sync``, where uv is installed);
    any other, what its requirements files and manifests ask for (pip), with the chosen extras
    and dependency groups.
    """
    uv = _uv() if (root / "uv.lock").is_file() else None
    if uv is not None:
        _sync_with_uv(root, env, uv, choice)
        if pytest:
            _ensure_pytest(env, [*_pip(env), "install", "--disable-pip-version-check"], root)
        return
    venv.EnvBuilder(symlinks=os.name != "nt", with_pip=False, clear=True).create(env)
    pip = [*_pip(env), "install", "--disable-pip-version-check", "--no-input"]
    pip += ["--progress-bar", "off"]
    names = pymanifests.python_manifests(root)
    constraints = [arg for name in pymanifests.constraint_files(names) for arg in ("-c", name)]
    installed = pymanifests.requirements_files(names)
    for name in installed:
        _run([*pip, *constraints, "-r", name], root)
    if pymanifests.installable(root):
        _install_project([*pip, *constraints], root, choice)
    groups = choice.groups_for(root)
    if groups:
        print(f"dependency groups: {', '.join(groups)}", flush=True)
        wanted = pymanifests.group_requirements(root, groups)
        _install_together_else_each([*pip, *constraints], wanted, root, "the groups'")
    _install_tox_deps([*pip, *constraints], pymanifests.tox_requirements(root, installed), root)
    if pytest:
        _ensure_pytest(env, [*pip, *constraints], root)


def _install_project(pip_install: list[str], root: Path, choice: envkeys.Choice) -> None:
    """The project, editable, with its extras. Extras chosen by default that do not install on
    this interpreter (an old pin, a native library missing) are dropped, first all but the
    test-named ones, then all, and the log says so; extras the user chose must install."""
    extras = choice.extras_for(root)
    tries = [extras]
    if choice.extras is None:
        tests = [e for e in extras if e in pymanifests.test_extras(root)]
        tries += [t for t in (tests, []) if t != extras]
    for index, chosen in enumerate(tries):
        print(f"extras: {', '.join(chosen) or '(none)'}", flush=True)
        target = "." + (f"[{','.join(chosen)}]" if chosen else "")
        try:
            _run([*pip_install, "-e", target], root)
            return
        except envkeys.SetupFailed as failed:
            if index + 1 == len(tries):
                raise
            print(f"the project did not install with {target}: {failed}", flush=True)


def _install_together_else_each(
    pip_install: list[str], wanted: list[str], root: Path, whose: str
) -> None:
    if not wanted:
        return
    try:
        _run([*pip_install, *wanted], root)
        return
    except envkeys.SetupFailed:
        pass
    for requirement in wanted:
        try:
            _run([*pip_install, requirement], root)
        except envkeys.SetupFailed as failed:
            print(f"{whose} {requirement} was not installed: {failed}", flush=True)


def _install_tox_deps(pip_install: list[str], tox: list[str], root: Path) -> None:
    """tox.ini's test dependencies, together, else one by one: written for the interpreters of
    their day, some may not install on this one (an old pin), and the others are still needed.
    What does not install is logged; the tests then say whether it mattered."""
    constraints: list[str] = []
    groups: list[list[str]] = []
    pending = iter(tox)
    for arg in pending:
        if arg == "-c":
            constraints += [arg, next(pending)]
        else:
            groups.append([arg, next(pending)] if arg == "-r" else [arg])
    if not groups:
        return
    try:
        _run([*pip_install, *tox], root)
        return
    except envkeys.SetupFailed:
        pass
    for group in groups:
        try:
            _run([*pip_install, *constraints, *group], root)
        except envkeys.SetupFailed as failed:
            print(f"tox.ini's {' '.join(group)} was not installed: {failed}", flush=True)


def _ensure_pytest(env: Path, pip_install: list[str], root: Path) -> None:
    probe = [str(envkeys.env_python(env)), "-c", "import pytest"]
    if subprocess.run(probe, check=False, capture_output=True).returncode != 0:
        _run([*pip_install, "pytest"], root)


def install_node(root: Path) -> None:
    lockfile = envkeys.node_lockfile(root)
    if lockfile is None:
        raise envkeys.SetupFailed("no package.json with a lockfile")
    command = dict(envkeys.NODE_INSTALLERS)[lockfile]
    if shutil.which(command[0]) is None:
        raise envkeys.SetupFailed(f"{command[0]} is not installed, and {lockfile} needs it")
    _run(list(command), root)
