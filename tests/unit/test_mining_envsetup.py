"""Shared test environments: keys, one build per key, thin per-copy links, in-place fallback.

The Python project here installs without any index: its build backend lives in the project
(``backend-path``) and its one dependency is a wheel file in the repository.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from harnessdrive.mining import envbuild, envkeys, envlink, envsetup, envstore, pymanifests
from harnessdrive.testing.wheels import WHEEL_WRITER, make_wheel, wheel_name

# Builds real environments; one worker runs the module, so its shared fixtures are built once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("mining-envsetup")]

BACKEND = (
    WHEEL_WRITER
    + """
NAME, VERSION = "calcpkg", "1.0"
ENTRY_POINTS = "[console_scripts]\\ncalc-where = calcpkg:where\\n"


def _wheel(directory, files):
    files = {**files, f"{NAME}-{VERSION}.dist-info/entry_points.txt": ENTRY_POINTS}
    return write_wheel(directory, NAME, VERSION, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # Like hatch-vcs or setuptools-scm: the version file is written into the tree at build time.
    with open(os.path.join("src", "calcpkg", "_version.py"), "w") as handle:
        handle.write("version = '1.0+built'\\n")
    return _wheel(wheel_directory, {"_calcpkg.pth": os.path.abspath("src") + "\\n"})


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise NotImplementedError
"""
)
PYPROJECT = """\
[build-system]
requires = []
build-backend = "backend"
backend-path = ["_backend"]

[project]
name = "calcpkg"
version = "1.0"

[project.optional-dependencies]
test = []
"""
GREET = wheel_name("greet", "1.0")


def python_project(root: Path) -> Path:
    files = {
        "pyproject.toml": PYPROJECT,
        "_backend/backend.py": BACKEND,
        "src/calcpkg/__init__.py": "def where():\n    print(__file__)\n",
        "requirements.txt": f"./wheels/{GREET}\n",
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    greet = make_wheel("greet", "1.0", {"greet/__init__.py": "def hi():\n    return 'hi'\n"})
    (root / "wheels").mkdir()
    (root / "wheels" / GREET).write_bytes(greet)
    return root


def copy_of(project: Path, dest: Path) -> Path:
    shutil.copytree(project, dest, ignore=shutil.ignore_patterns(".venv", "*.egg-info"))
    return dest


def python_in(copy: Path, code: str) -> str:
    result = subprocess.run(
        [str(copy / ".venv" / "bin" / "python"), "-c", code], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_keys_follow_the_manifests(tmp_path: Path) -> None:
    project = python_project(tmp_path / "p")
    key = envkeys.environment_key(project, "python")
    assert key == envkeys.environment_key(copy_of(project, tmp_path / "q"), "python")
    assert key != envkeys.environment_key(project, "python", pytest=True)
    (tmp_path / "q" / "src" / "calcpkg" / "__init__.py").write_text("changed = True\n")
    assert envkeys.environment_key(tmp_path / "q", "python") == key  # code is not a manifest
    (tmp_path / "q" / "requirements-dev.txt").write_text("pytest\n")
    assert envkeys.environment_key(tmp_path / "q", "python") != key
    assert envkeys.environment_key(project, "node") is None  # no package.json and lockfile


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("envs")
    project = python_project(root / "prototype")
    folder = envstore.build_into_store(project, root / "store", "python", pytest=False)
    assert folder is not None and envkeys.is_ready(folder)
    shutil.rmtree(project / ".venv", ignore_errors=True)
    return root, folder


def test_a_store_build_keeps_the_project_itself_out_of_the_shared_packages(
    store: tuple[Path, Path],
) -> None:
    _, folder = store
    site = next(folder.glob("lib/python*/site-packages"))
    assert (site / "greet" / "__init__.py").is_file()
    assert not list(site.glob("calcpkg*")) and not (site / "_calcpkg.pth").exists()
    info = json.loads((folder / "env.json").read_text())
    assert (
        "site/_calcpkg.pth" in info["project_files"] and "bin/calc-where" in info["project_files"]
    )


def test_each_copy_links_the_shared_environment_and_imports_its_own_code(
    store: tuple[Path, Path],
) -> None:
    root, folder = store
    for name in ("copy-a", "copy-b"):
        copy = copy_of(root / "prototype", root / name)
        said = envlink.link_or_build(copy, folder.parent, "python", pytest=False)
        assert said.startswith("linked the shared python environment")
        where = python_in(copy, "import calcpkg, greet; print(calcpkg.__file__, greet.hi())")
        assert where == f"{copy / 'src' / 'calcpkg' / '__init__.py'} hi"
        script = subprocess.run([str(copy / ".venv" / "bin" / "calc-where")], capture_output=True)
        assert script.stdout.decode().strip() == str(copy / "src" / "calcpkg" / "__init__.py")
        # The thin environment holds no packages of its own: it stays small.
        assert sum(1 for _ in (copy / ".venv").rglob("*")) < 40


def test_a_file_the_install_wrote_into_the_tree_reaches_every_copy(
    store: tuple[Path, Path],
) -> None:
    root, folder = store
    info = json.loads((folder / "env.json").read_text())
    assert info["generated_files"] == ["src/calcpkg/_version.py"]
    # A fresh copy of the files (as a snapshot gives them) has no version file of its own.
    copy = python_project(root / "fresh-copy")
    assert not (copy / "src" / "calcpkg" / "_version.py").exists()
    envlink.link_or_build(copy, folder.parent, "python", pytest=False)
    assert python_in(copy, "from calcpkg._version import version; print(version)") == "1.0+built"
    # A copy that has the file keeps its own.
    own = python_project(root / "own-copy")
    (own / "src" / "calcpkg" / "_version.py").write_text("version = 'mine'\n")
    envlink.link_or_build(own, folder.parent, "python", pytest=False)
    assert python_in(own, "from calcpkg._version import version; print(version)") == "mine"


def test_a_copy_whose_manifests_changed_builds_its_own_environment(
    store: tuple[Path, Path],
) -> None:
    root, folder = store
    copy = copy_of(root / "prototype", root / "changed")
    (copy / "requirements.txt").write_text("# greet is gone\n")
    said = envlink.link_or_build(copy, folder.parent, "python", pytest=False)
    assert said.startswith("built the python environment") and said.endswith("in place")
    assert python_in(copy, "import calcpkg, importlib.util as u; print(u.find_spec('greet'))") == (
        "None"
    )


def test_the_script_runs_on_its_own_from_the_store(store: tuple[Path, Path]) -> None:
    root, folder = store
    script = folder.parent / "envsetup.py"
    # the script and the modules it imports
    for module in (envsetup, envkeys, envbuild, envstore, envlink, pymanifests):
        shutil.copyfile(module.__file__, folder.parent / Path(module.__file__).name)
    copy = copy_of(root / "prototype", root / "scripted")
    result = subprocess.run(
        [sys.executable, str(script), "link", "--python"], cwd=copy, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "linked the shared python environment" in result.stdout


def test_a_failed_build_exits_with_the_reason(tmp_path: Path) -> None:
    project = tmp_path / "broken"
    project.mkdir()
    (project / "requirements.txt").write_text("./wheels/missing-1.0-py3-none-any.whl\n")
    script = Path(envsetup.__file__)
    result = subprocess.run(
        [sys.executable, str(script), "build", "--python", "--store", str(tmp_path / "store")],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "environment setup failed" in result.stderr
    assert not any(envkeys.is_ready(f) for f in (tmp_path / "store").iterdir())


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_node_modules_are_installed_once_and_linked(tmp_path: Path) -> None:
    project = tmp_path / "web"
    (project / "vendor").mkdir(parents=True)
    package = io.BytesIO()
    with tarfile.open(fileobj=package, mode="w:gz") as archive:
        for name, text in {
            "package/package.json": '{"name": "greet", "version": "1.0.0", "main": "index.js"}',
            "package/index.js": "exports.hi = () => 'hi';\n",
        }.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    (project / "vendor" / "greet-1.0.0.tgz").write_bytes(package.getvalue())
    manifest = {
        "name": "web",
        "version": "1.0.0",
        "dependencies": {"greet": "file:vendor/greet-1.0.0.tgz"},
    }
    (project / "package.json").write_text(json.dumps(manifest))
    npm = ["npm", "install", "--offline", "--no-audit", "--no-fund"]
    subprocess.run(npm, cwd=project, check=True, capture_output=True)
    shutil.rmtree(project / "node_modules")
    folder = envstore.build_into_store(project, tmp_path / "store", "node", pytest=False)
    assert folder is not None and (folder / "node_modules" / "greet" / "index.js").is_file()
    copy = copy_of(project, tmp_path / "copy")
    assert envlink.link_or_build(copy, tmp_path / "store", "node", pytest=False).startswith(
        "linked"
    )
    said = subprocess.run(
        ["node", "-e", "console.log(require('greet').hi())"],
        cwd=copy,
        capture_output=True,
        text=True,
    )
    assert said.stdout.strip() == "hi"


def test_console_scripts_start_from_a_copy_with_a_long_path(store: tuple[Path, Path]) -> None:
    root, folder = store
    deep = root / ("d" * 120) / "copy"
    copy = copy_of(root / "prototype", deep)
    envlink.link_or_build(copy, folder.parent, "python", pytest=False)
    script = copy / ".venv" / "bin" / "calc-where"
    assert script.read_bytes().startswith(b"#!/bin/sh\n")  # too long for a #! line
    said = subprocess.run([str(script)], capture_output=True, text=True)
    assert said.stdout.strip() == str(copy / "src" / "calcpkg" / "__init__.py"), said.stderr


@pytest.mark.parametrize(
    "launch",
    [
        b"#!/envs/python-1/bin/python\n",
        # pip's own form for a long path, as it writes it
        b"#!/bin/sh\n'''exec' /envs/python-1/bin/python \"$0\" \"$@\"\n' '''\n",
    ],
)
def test_a_scripts_launch_lines_are_found_and_replaced(launch: bytes) -> None:
    body = b"import sys\nfrom pytest import console_main\nsys.exit(console_main())\n"
    assert envlink.script_body(launch + body, b"/envs/python-1/bin/python") == body
    assert envlink.script_body(launch + body, b"/other/bin/python") is None
    header = envlink.script_header(b"/a b/.venv/bin/python")
    assert header == b"#!/bin/sh\n'''exec' \"/a b/.venv/bin/python\" \"$0\" \"$@\"\n' '''\n"
    assert envlink.script_body(header + body, b"/a b/.venv/bin/python") == body


def uv_pyproject(wheels: Path) -> str:
    # The tests group is empty; the docs group holds the one wheel: it must not be installed.
    docs = f'docs = ["greet @ {(wheels / GREET).as_uri()}"]'
    return PYPROJECT.replace(
        "[project.optional-dependencies]\ntest = []\n",
        f"[dependency-groups]\ntests = []\n{docs}\n",
    )


def test_a_project_with_a_uv_lock_gets_what_the_lock_pins_through_uv(tmp_path: Path) -> None:
    uv = envbuild._uv()
    if uv is None:
        pytest.skip("uv is not installed here")  # scripts/test.sh installs it
    project = python_project(tmp_path / "prototype")
    (project / "pyproject.toml").write_text(uv_pyproject(project / "wheels"))
    (project / "requirements.txt").unlink()
    locked = subprocess.run([uv, "lock", "--offline"], cwd=project, capture_output=True, text=True)
    assert locked.returncode == 0, locked.stderr
    assert "uv.lock" in pymanifests.python_manifests(project)
    assert pymanifests.test_groups(project) == ["tests"]
    pristine = copy_of(project, tmp_path / "pristine")
    folder = envstore.build_into_store(project, tmp_path / "store", "python", pytest=False)
    assert folder is not None and envkeys.is_ready(folder)
    assert "uv =" in (folder / "pyvenv.cfg").read_text()  # uv made it, not pip
    copy = copy_of(pristine, tmp_path / "copy")
    said = envlink.link_or_build(copy, folder.parent, "python", pytest=False)
    assert said.startswith("linked the shared python environment")
    code = "import calcpkg, importlib.util as u; print(calcpkg.__file__, u.find_spec('greet'))"
    assert python_in(copy, code) == f"{copy / 'src' / 'calcpkg' / '__init__.py'} None"


def test_tox_deps_are_installed_where_no_other_file_names_them(tmp_path: Path) -> None:
    project = python_project(tmp_path / "prototype")
    (project / "requirements.txt").unlink()
    # tox.ini alone names greet; a line for another interpreter names what does not exist
    # and one pin that cannot install here (no index): the others are installed all the same
    missing = "./wheels/missing-1.0-py3-none-any.whl"
    deps = f"py27: no-such-package-anywhere\n    {missing}\n    ./wheels/{GREET}"
    tox = f"[testenv]\ndeps =\n    {deps}\n"
    (project / "tox.ini").write_text(tox)
    folder = envstore.build_into_store(project, tmp_path / "store", "python", pytest=False)
    assert folder is not None and envkeys.is_ready(folder)
    env_python = str(folder / "bin" / "python")
    found = subprocess.run([env_python, "-c", "import greet"], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
