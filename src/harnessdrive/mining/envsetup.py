"""Test environments for fresh copies, built once per set of dependency manifests and shared.

A fresh copy of a Python project needs a virtual environment with its dependencies; a Node
project needs ``node_modules``. Building one per copy costs minutes, and thirty commits that
share a ``pyproject.toml`` need the same environment. So each environment is built once into a
store, under a key that hashes the manifests it was built from, and every copy links to it:

- Python: the store holds a full virtual environment with the dependencies and the project's
  test extras. A copy gets a thin ``.venv`` of its own (no packages, made in milliseconds) whose
  site-packages chains to the shared one, plus the project's own editable-install files
  rewritten to point at the copy, so tests import the copy's code and never another copy's.
  What the project's install wrote into its own tree (a version file made from the git tags, as
  hatch-vcs and setuptools-scm write it; an extension built in place) is kept with the
  environment and written into each copy that does not have it.
- Node: ``node_modules`` is installed from the lockfile once; a copy gets a link to it.

When the store has no environment for a copy's manifests (a change edited them after mining),
the copy builds its own in place, as a plain setup command would.

This file is a script with no imports outside the standard library: a task's setup command runs
it by path, from a copy kept next to the environments it serves, beside copies of the modules it
imports (``envkeys``: names and places; ``envbuild``: building; ``envstore``: filling the store;
``envlink``: linking a copy; ``pymanifests``: reading the manifests)::

    python envsetup.py link  [--python] [--pytest] [--node]   # in a copy: link, or build there
    python envsetup.py build [--python] [--pytest] [--node]   # in a prototype: fill the store
    python envsetup.py fresh [--python] [--pytest] [--node]   # in a copy: always build there

``--extras a,b`` and ``--groups c`` choose the extras and dependency groups installed with the
project (default: the ones :func:`pymanifests.default_extras` and ``default_groups`` choose).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__:
    from harnessdrive.mining import envkeys, envlink, envstore
else:  # run as a script, beside its copies of the modules; the store gets no __pycache__
    sys.dont_write_bytecode = True
    import envkeys  # type: ignore[import-not-found, no-redef]
    import envlink  # type: ignore[import-not-found, no-redef]
    import envstore  # type: ignore[import-not-found, no-redef]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Shared test environments for fresh copies.")
    parser.add_argument("mode", choices=("link", "build", "fresh"))
    parser.add_argument("--python", action="store_true", help="a Python virtual environment")
    parser.add_argument("--pytest", action="store_true", help="make sure pytest is installed")
    parser.add_argument("--node", action="store_true", help="node_modules from the lockfile")
    parser.add_argument("--store", type=Path, help="default: this file's folder")
    parser.add_argument("--extras", help="extras to install, comma-separated (default: chosen)")
    parser.add_argument("--groups", help="dependency groups, comma-separated (default: chosen)")
    args = parser.parse_args(argv)
    choice = envkeys.Choice(_names(args.extras), _names(args.groups))
    store = (args.store or Path(__file__).resolve().parent).resolve()
    root = Path.cwd()
    try:
        for kind in (k for k in envkeys.KINDS if getattr(args, k)):
            if args.mode == "build":
                envstore.build_into_store(root, store, kind, pytest=args.pytest, choice=choice)
            else:
                chosen = store if args.mode == "link" else None
                found = envlink.link_or_build(root, chosen, kind, pytest=args.pytest, choice=choice)
                print(found, flush=True)
    except (envkeys.SetupFailed, OSError, ValueError) as exc:
        print(f"environment setup failed: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0


def _names(given: str | None) -> tuple[str, ...] | None:
    if given is None:
        return None
    return tuple(n.strip() for n in given.split(",") if n.strip())


if __name__ == "__main__":
    sys.exit(main())
