"""What a Python project's own files say its tests need: the manifests that key its shared
environment, the requirements files pip installs, the extras and dependency groups (PEP 735) its
tests use, and what tox's and nox's test environments install.

Standard library only: :mod:`harnessdrive.mining.envsetup` imports it when it runs as a script
beside the environments it serves, where harnessdrive itself need not be importable.
"""

from __future__ import annotations

import configparser
import os
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path

PYTHON_MANIFESTS = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "Pipfile",
    "Pipfile.lock",
    "poetry.lock",
    "pdm.lock",
    "uv.lock",
)
_REQUIREMENTS = re.compile(r"requirements[\w.-]*\.(txt|in)")
REQUIREMENTS_FOLDER = "requirements"
_REQUIREMENTS_FILE = re.compile(r"[\w.-]+\.(txt|in)")
_CONSTRAINTS = re.compile(r"constraints[\w.-]*\.txt")
TEST_EXTRAS = ("test", "tests", "testing", "dev")
"""Names of optional-dependency groups (and dependency groups) that hold what the tests need."""
NOT_FOR_TESTS = frozenset(
    {"doc", "docs", "documentation", "lint", "linting", "linters", "typing", "types", "mypy",
     "style", "format", "release", "publish", "build", "dist", "pre-commit", "bench",
     "benchmark", "benchmarks", "notebook", "notebooks"}
)  # fmt: skip
"""Extras and groups for tools other than the tests: never installed unless asked for."""
UNIONS = frozenset({"dev", "all", "full", "complete", "everything"})
"""Extras and groups that gather the others (and the tool belt): only when nothing else fits."""
TOX_INI = "tox.ini"
NOXFILE = "noxfile.py"
# What a nox session installs of the project itself: ``session.install("-e", ".[tests,crypto]")``.
_NOX_EXTRAS = re.compile(r"""\binstall\([^)]*?["']\.\[([\w,\s-]+)\]["']""")
# A tox dependency line that applies only to some environments ("py38: mock").
_TOX_CONDITIONAL = re.compile(r"^[\w!,{}.-]+\s*:(?!//)")
_TOX_INIDIR = "{toxinidir}/"
_TOX_FILE = re.compile(r"(-r|-c|--requirement|--constraint)[\s=]*(\S+)")
_THE_PROJECT = re.compile(r"\.(\[[\w,\s-]*\])?")  # installed editable already


def python_manifests(root: Path) -> list[str]:
    """Files that decide what a Python environment holds, sorted: at the top level (tox.ini
    where it names test dependencies), and the requirements files of a ``requirements/``
    folder (``requirements/tests.txt``)."""
    names = []
    for entry in os.scandir(root):
        name = entry.name
        if entry.is_file() and (
            name in PYTHON_MANIFESTS
            or _REQUIREMENTS.fullmatch(name)
            or _CONSTRAINTS.fullmatch(name)
        ):
            names.append(name)
    if (root / TOX_INI).is_file() and (tox_requirements(root, installed=[]) or tox_extras(root)):
        names.append(TOX_INI)  # a tox.ini that only configures tools would not matter
    if (root / NOXFILE).is_file() and nox_extras(root):
        names.append(NOXFILE)
    folder = root / REQUIREMENTS_FOLDER
    if folder.is_dir() and not folder.is_symlink():
        for entry in os.scandir(folder):
            if entry.is_file() and _REQUIREMENTS_FILE.fullmatch(entry.name):
                names.append(f"{REQUIREMENTS_FOLDER}/{entry.name}")
    return sorted(names)


def constraint_files(names: list[str]) -> list[str]:
    return [n for n in names if _CONSTRAINTS.fullmatch(n)]


def requirements_files(names: list[str]) -> list[str]:
    """What pip installs with ``-r``: every top-level requirements file, and of the folder's
    the ones named for tests (``tests.txt``), else a ``dev.txt`` (docs' need not be built)."""
    chosen = [n for n in names if _REQUIREMENTS.fullmatch(n) and n.endswith(".txt")]
    # pip installs the compiled ``.txt``; a ``.in`` beside it only keys the environment
    in_folder = {
        Path(n).stem.lower(): n
        for n in names
        if n.startswith(REQUIREMENTS_FOLDER + "/") and n.endswith(".txt")
    }
    tests = [in_folder[s] for s in sorted(in_folder) if s in TEST_EXTRAS and s != "dev"]
    if not tests and "dev" in in_folder:
        tests = [in_folder["dev"]]
    return chosen + tests


def pyproject(root: Path) -> dict[str, object]:
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def _ini(path: Path) -> configparser.ConfigParser | None:
    if not path.is_file():
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except configparser.Error:
        return None
    return parser


def test_extras(root: Path) -> list[str]:
    """The project's optional-dependency groups that look like test dependencies."""
    groups: set[str] = set()
    project = pyproject(root).get("project", {})
    optional = project.get("optional-dependencies", {}) if isinstance(project, dict) else {}
    if isinstance(optional, dict):
        groups.update(optional)
    setup_cfg = _ini(root / "setup.cfg")
    if setup_cfg is not None and setup_cfg.has_section("options.extras_require"):
        groups.update(setup_cfg.options("options.extras_require"))
    return _for_tests(groups)


def test_groups(root: Path) -> list[str]:
    """The project's dependency groups (PEP 735) that look like test dependencies."""
    groups = pyproject(root).get("dependency-groups", {})
    names = groups if isinstance(groups, dict) else {}
    return _for_tests(names)


def all_extras(root: Path) -> list[str]:
    """Every optional-dependency group the project declares (pyproject.toml, setup.cfg)."""
    groups: set[str] = set()
    project = pyproject(root).get("project", {})
    optional = project.get("optional-dependencies", {}) if isinstance(project, dict) else {}
    if isinstance(optional, dict):
        groups.update(str(name) for name in optional)
    setup_cfg = _ini(root / "setup.cfg")
    if setup_cfg is not None and setup_cfg.has_section("options.extras_require"):
        groups.update(setup_cfg.options("options.extras_require"))
    return sorted(groups)


def all_groups(root: Path) -> list[str]:
    """Every dependency group (PEP 735) the project declares."""
    groups = pyproject(root).get("dependency-groups", {})
    return sorted(str(name) for name in groups) if isinstance(groups, dict) else []


def default_extras(root: Path) -> list[str]:
    """The extras the tests are run with unless the user chooses: the ones tox's or nox's test
    environments install, and every other one that is not for docs, linters or releases (an
    optional backend, such as pyjwt's ``crypto``, is what the tests of that backend need)."""
    return _chosen(all_extras(root), [*tox_extras(root), *nox_extras(root)])


def default_groups(root: Path) -> list[str]:
    """The dependency groups installed unless the user chooses, by the same rule as extras."""
    return _chosen(all_groups(root), tox_groups(root))


def _chosen(declared: list[str], named: list[str]) -> list[str]:
    wanted = {_normal(n) for n in named}
    chosen = [n for n in declared if _normal(n) in wanted]
    others = [
        n for n in declared if _normal(n) not in wanted and _normal(n) not in NOT_FOR_TESTS | UNIONS
    ]
    if chosen or others:
        return sorted({*chosen, *others})
    unions = sorted((n for n in declared if _normal(n) in UNIONS), key=lambda n: n == "all")
    return unions[:1]  # ``dev`` before ``all``, which may bring docs' tools too


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def group_requirements(root: Path, names: Iterable[str]) -> list[str]:
    """The requirements of dependency groups ``names``, each ``include-group`` followed
    (once each); unknown names are left out."""
    table = pyproject(root).get("dependency-groups", {})
    groups = {_normal(str(k)): v for k, v in table.items()} if isinstance(table, dict) else {}
    found: list[str] = []
    seen: set[str] = set()

    def add(name: str) -> None:
        key = _normal(name)
        if key in seen or not isinstance(groups.get(key), list):
            return
        seen.add(key)
        for item in groups[key]:
            if isinstance(item, str):
                if item not in found:
                    found.append(item)
            elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
                add(item["include-group"])

    for name in names:
        add(name)
    return found


def tox_extras(root: Path) -> list[str]:
    """The extras tox.ini's ``[testenv]`` installs (``extras = tests, crypto``)."""
    return _tox_list(root, "extras")


def tox_groups(root: Path) -> list[str]:
    """The dependency groups tox.ini's ``[testenv]`` installs (``dependency_groups = test``)."""
    return _tox_list(root, "dependency_groups")


def _tox_list(root: Path, option: str) -> list[str]:
    tox = _ini(root / TOX_INI)
    if tox is None or not tox.has_option("testenv", option):
        return []
    names = []
    for raw in re.split(r"[,\n]", tox.get("testenv", option)):
        name = raw.split("#", 1)[0].strip()
        if name and not _TOX_CONDITIONAL.match(name) and "{" not in name:
            names.append(name)
    return names


def nox_extras(root: Path) -> list[str]:
    """The extras noxfile.py's sessions install with the project (``.[tests,crypto]``)."""
    path = root / NOXFILE
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8", errors="replace")
    found = {n.strip() for match in _NOX_EXTRAS.findall(text) for n in match.split(",")}
    return sorted(n for n in found if n)


def _for_tests(names: Iterable[str]) -> list[str]:
    """The names that look like test dependencies; ``dev`` only when no other one does (it
    tends to bring the whole tool belt: tox, linters, type checkers, pre-commit)."""
    found = sorted(name for name in names if name.lower() in TEST_EXTRAS)
    return [name for name in found if name.lower() != "dev"] or found


def installable(root: Path) -> bool:
    """A project pip can install: setup.py, or a pyproject.toml that says how to build it."""
    if (root / "setup.py").is_file():
        return True
    path = root / "pyproject.toml"
    if not path.is_file():
        return False
    text = path.read_text(encoding="utf-8", errors="replace")
    return re.search(r"^\[(build-system|project)\]", text, re.MULTILINE) is not None


def tox_requirements(root: Path, installed: list[str]) -> list[str]:
    """pip's arguments for what tox.ini's ``[testenv]`` installs before the tests (``deps``):
    requirements, ``-r`` and ``-c`` files of the project; none of ``installed`` again.

    Older projects name their test-only dependencies (freezegun, say) nowhere else. Lines for
    some environments only (``py38: mock``) and lines with other substitutions are left out.
    """
    tox = _ini(root / TOX_INI)
    if tox is None or not tox.has_option("testenv", "deps"):
        return []
    argv: list[str] = []
    for raw in tox.get("testenv", "deps").splitlines():
        line = raw.split(" #", 1)[0].strip().replace(_TOX_INIDIR, "")
        if not line or line.startswith("#") or "{" in line or _TOX_CONDITIONAL.match(line):
            continue
        named = _TOX_FILE.fullmatch(line)
        if named is not None:
            option, name = named.groups()
            if name not in installed and _inside(root, name):
                argv += ["-r" if option in ("-r", "--requirement") else "-c", name]
        elif not line.startswith("-") and not _THE_PROJECT.fullmatch(line):
            argv.append(line)
    return argv


def _inside(root: Path, name: str) -> bool:
    path = (root / name).resolve()
    return path.is_file() and path.is_relative_to(root.resolve())


def manifest_bytes(root: Path, name: str) -> bytes:
    """What of manifest ``name`` keys the environment: the whole file, but of tox.ini only its
    test dependencies (its tools' settings change far more often)."""
    if name == TOX_INI:
        found = [*tox_requirements(root, installed=[]), *tox_extras(root), *tox_groups(root)]
        return "\n".join(found).encode()
    if name == NOXFILE:
        return "\n".join(nox_extras(root)).encode()
    return (root / name).read_bytes()
