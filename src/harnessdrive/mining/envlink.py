"""Linking a copy to its shared environment: a thin ``.venv`` whose site-packages chains to the
shared one (with the project's own files pointing at the copy, and console scripts that start
the thin interpreter), or a link to the shared ``node_modules``; a copy whose manifests have no
environment in the store builds its own in place. Part of the setup script
(:mod:`harnessdrive.mining.envsetup`): standard library only.
"""

from __future__ import annotations

import json
import os
import shutil
import venv
from pathlib import Path

if __package__:
    from harnessdrive.mining import envbuild, envkeys
else:  # run as a script, beside envsetup.py
    import envbuild  # type: ignore[import-not-found, no-redef]
    import envkeys  # type: ignore[import-not-found, no-redef]


def link_python(root: Path, shared: Path) -> None:
    """A thin ``.venv`` in ``root`` that sees the shared packages and the copy's own code."""
    thin = root / ".venv"
    envkeys.remove(thin)
    venv.EnvBuilder(symlinks=os.name != "nt", with_pip=False, clear=True).create(thin)
    site = envkeys.site_packages(thin)
    line = f"import site; site.addsitedir({str(envkeys.site_packages(shared))!r})\n"
    (site / envkeys.SHARED_PTH).write_text(line, encoding="utf-8")
    info = json.loads((shared / envkeys.ENV_INFO).read_text(encoding="utf-8"))
    prototype, here = os.fsencode(info["prototype"]), os.fsencode(str(root))
    project_site = shared / "project" / "site"
    if project_site.is_dir():
        for source in sorted(project_site.rglob("*")):
            if source.is_file():
                target = site / source.relative_to(project_site)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(source.read_bytes().replace(prototype, here))
    generated = shared / "project" / envkeys.GENERATED
    for relative in info.get("generated_files", []):
        target = root / relative
        if not target.exists() and not target.is_symlink():  # the copy's own file wins
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(generated / relative, target)
    # Console scripts (pytest, the project's own) must start the thin interpreter.
    old = os.fsencode(str(envkeys.env_python(Path(info["env"]))))
    new = os.fsencode(str(envkeys.env_python(thin)))
    thin_bin = envkeys.env_python(thin).parent
    for folder in (envkeys.env_python(shared).parent, shared / "project" / "bin"):
        if not folder.is_dir():
            continue
        for source in sorted(folder.iterdir()):
            target = thin_bin / source.name
            if target.exists() or target.is_symlink() or not source.is_file():
                continue
            data = source.read_bytes()
            body = script_body(data, old)
            if body is not None:
                target.write_bytes(script_header(new) + body)
                target.chmod(0o755)
            elif os.access(source, os.X_OK):
                os.symlink(source, target)  # a native program (ruff, say) needs no interpreter


# The kernel reads at most 127 bytes of a "#!" line and splits it at spaces, so pip writes a
# long interpreter path as a shell line that starts it instead; so do we.
_SHELL_LAUNCH = b"#!/bin/sh\n'''exec' "
_SHELL_LAUNCH_END = b"\n' '''\n"
_SHEBANG_LIMIT = 127


def script_body(data: bytes, python: bytes) -> bytes | None:
    """The script after its launch line(s), when ``python`` launches it; else None."""
    if data.startswith(b"#!" + python + b"\n"):
        return data[len(python) + 3 :]
    if data.startswith(_SHELL_LAUNCH) and python in data[:4096]:
        end = data.find(_SHELL_LAUNCH_END)
        return data[end + len(_SHELL_LAUNCH_END) :] if end != -1 else None
    return None


def script_header(python: bytes) -> bytes:
    """The launch line(s) for ``python``: the shell form for a long path or one with spaces."""
    if len(python) + 2 <= _SHEBANG_LIMIT and b" " not in python:
        return b"#!" + python + b"\n"
    quoted = python.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    return _SHELL_LAUNCH + b'"' + quoted + b'" "$0" "$@"' + _SHELL_LAUNCH_END


def link_node(root: Path, shared: Path) -> None:
    target = root / "node_modules"
    envkeys.remove(target)
    os.symlink(shared / "node_modules", target)


def link_or_build(
    root: Path,
    store: Path | None,
    kind: str,
    *,
    pytest: bool,
    choice: envkeys.Choice = envkeys.DEFAULT_CHOICE,
) -> str:
    """Give the copy in ``root`` its environment; says what it did."""
    key = envkeys.environment_key(root, kind, pytest=pytest, choice=choice)
    if key is None:
        return f"no {kind} environment needed"
    folder = envkeys.environment_folder(store, kind, key) if store is not None else None
    if folder is not None and envkeys.is_ready(folder):
        (link_python if kind == "python" else link_node)(root, folder)
        return f"linked the shared {kind} environment {key}"
    if kind == "python":
        envbuild.build_python(root, root / ".venv", pytest=pytest, choice=choice)
    else:
        envbuild.install_node(root)
    return f"built the {kind} environment {key} in place"
