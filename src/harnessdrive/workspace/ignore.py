"""Tool caches that never count as part of a change, and never come along in a copy."""

from __future__ import annotations

# Folders that only ever hold caches or installed dependencies.
CACHE_DIRS = (
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".tox",
    ".nox",
    ".venv",
    "node_modules",
    ".eggs",
    ".gradle",
    ".next",
    ".parcel-cache",
    ".turbo",
)
# Build output: ignored in a change (seed 000), but copied when a plain folder holds it, since
# some projects keep sources in folders of these names.
BUILD_DIRS = ("dist", "build", "target")
CACHE_FILE_PATTERNS = ("*.pyc", "*.pyo", ".coverage", ".coverage.*", ".DS_Store")
CACHE_DIR_PATTERNS = ("*.egg-info",)


def exclude_file_text() -> str:
    """The patterns in git's ``info/exclude`` syntax."""
    lines = [f"{name}/" for name in (*CACHE_DIRS, *BUILD_DIRS)]
    lines += [f"{pattern}/" for pattern in CACHE_DIR_PATTERNS]
    lines += list(CACHE_FILE_PATTERNS)
    return "\n".join(lines) + "\n"


def is_cache_name(name: str, *, is_dir: bool) -> bool:
    """True for a file or folder name a plain-folder copy leaves out."""
    from fnmatch import fnmatch

    if is_dir:
        return name in CACHE_DIRS or any(fnmatch(name, p) for p in CACHE_DIR_PATTERNS)
    return any(fnmatch(name, p) for p in CACHE_FILE_PATTERNS)
