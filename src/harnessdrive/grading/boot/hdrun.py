"""Start a test runner so that nothing in the grading copy can stand in for it.

harnessdrive copies this file into a read-only folder outside the grading copy (as
``hdrun_main.py``, with its bytecode, imported by a four-line ``hdrun.py`` beside it) and runs it
in place of ``python -m pytest``, ``pytest`` and ``python -m unittest``. Python puts this file's
folder first on ``sys.path``, not the working folder, so the runner is imported from the
environment before any folder of the copy is importable. Then:

- a guard on ``sys.meta_path`` resolves the runner's own top-level modules, the environment's
  pytest plugins and the standard library from outside the copy only, so a ``pluggy.py`` or
  ``json.py`` in the copy never replaces them;
- pytest's plugin autoload is off, and the plugins the environment itself installs (found
  outside the copy) are named with ``-p``: metadata planted in the copy registers nothing;
- unittest runs through a result class of ours that writes a junit report.

Code under test still runs in this process and can undo all of it; the canary tests that
harnessdrive plants beside the hidden tests are what catches that. This file imports only the
standard library and must run on any Python 3.8 or later.
"""

import gc
import importlib.machinery
import os
import sys
import time

COPY_ENV = "HARNESSDRIVE_GRADING_COPY"
JUNIT_ENV = "HARNESSDRIVE_JUNIT"
OWN_ENV = "HARNESSDRIVE_OWN_MODULES"
RUN_ALL_ENV = "HARNESSDRIVE_RUN_ALL"
_BUILTIN = frozenset(sys.builtin_module_names)
RUNNER_MODULES = (
    "pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging", "exceptiongroup", "tomli",
    "colorama", "pygments", "unittest",
)  # fmt: skip


def _inside(path, root):
    if not root:
        return False
    try:
        full = os.path.realpath(path or os.getcwd())
    except OSError:
        return False
    return full == root or full.startswith(root.rstrip(os.sep) + os.sep)


class _Guard:
    """Finds protected top-level names on the folders of ``sys.path`` outside the copy only.

    A plain class: ``sys.meta_path`` needs only ``find_spec``, and importing ``importlib.abc``
    (which brings in ``importlib.resources``, ``pathlib``, ``tempfile``, ``inspect``) would cost
    each test run tens of milliseconds.
    """

    def __init__(self, names, copy):
        self.names = frozenset(names)
        self.copy = copy
        self._outside = {}

    def _is_outside(self, entry):
        # Resolved once per sys.path entry: every protected import asks about each of them.
        # "" is the working folder, which may change.
        if not entry:
            return not _inside(entry, self.copy)
        known = self._outside.get(entry)
        if known is None:
            known = self._outside[entry] = not _inside(entry, self.copy)
        return known

    def find_spec(self, fullname, path=None, target=None):
        if path is not None or fullname not in self.names or fullname in _BUILTIN:
            return None  # a built-in module comes before any folder: nothing to search
        outside = [p for p in sys.path if isinstance(p, str) and self._is_outside(p)]
        return importlib.machinery.PathFinder.find_spec(fullname, outside)


def _copy_root():
    copy = os.environ.get(COPY_ENV, "")
    return os.path.realpath(copy) if copy else ""


def _protect(extra=()):
    """Install the guard (before the runner is imported: PYTHONPATH may point into the copy)."""
    own = set(filter(None, os.environ.get(OWN_ENV, "").split(",")))
    stdlib = set(getattr(sys, "stdlib_module_names", ()))
    names = (stdlib | set(RUNNER_MODULES) | set(extra)) - own - {"__main__"}
    guard = _Guard(names, _copy_root())
    sys.meta_path.insert(0, guard)
    return guard


def _freeze_startup():
    """The interpreter's startup, the runner and all they imported live as long as this
    process: frozen (moved out of the collector's way, as a server does before it forks), they
    are skipped by every full collection during the run: a tenth to a fifth of a small pytest
    suite's CPU time, a twelfth of a small unittest run's instructions. What the tests create
    is collected as ever; only gc.get_objects() and gc.get_referrers() no longer list the
    runner's own startup objects."""
    gc.freeze()


def _environment_plugins(blocked):
    """Module names of the pytest11 plugins installed outside the copy, in a stable order."""
    from importlib import metadata

    copy = _copy_root()
    found = {}
    for dist in metadata.distributions():
        where = getattr(dist, "_path", None)
        if where is None or _inside(str(where), copy):
            continue
        if (dist.metadata["Name"] or "").lower() == "harnessdrive":
            continue  # its eval plugin runs evals; it has no place in a task's test run
        for entry in dist.entry_points:
            if entry.group != "pytest11" or entry.name in blocked:
                continue
            module = entry.value.partition(":")[0].strip()
            if module and module not in blocked:
                found.setdefault(entry.name, module)
    return [found[name] for name in sorted(found)]


def _blocked(args):
    words = list(args) + os.environ.get("PYTEST_ADDOPTS", "").split()
    blocked = set()
    for i, word in enumerate(words):
        value = word[2:] if word.startswith("-p") and len(word) > 2 else None
        if word == "-p" and i + 1 < len(words):
            value = words[i + 1]
        if value and value.startswith("no:"):
            blocked.add(value[3:])
    return blocked


def run_pytest(args, insert_cwd):
    guard = _protect()
    import pytest

    plugins = _environment_plugins(_blocked(args))
    guard.names = guard.names | {module.partition(".")[0] for module in plugins}
    argv = [word for module in plugins for word in ("-p", module)] + list(args)
    if getattr(pytest, "version_tuple", (0,)) >= (8, 4):
        # The flag, unlike the variable, does not reach pytest runs that the tests start.
        argv.insert(0, "--disable-plugin-autoload")
    else:
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if insert_cwd:
        sys.path.insert(0, os.getcwd())
    if os.environ.get(RUN_ALL_ENV):
        # Stopping at the first failure would stop at a planted expected failure.
        argv.append("--maxfail=0")
    sys.argv = ["pytest", *argv]
    _freeze_startup()
    return pytest.main(argv)


def _junit_result_class(base):
    class JunitResult(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.cases = []
            self._started = {}

        def startTest(self, test):
            self._started[id(test)] = time.monotonic()
            super().startTest(test)

        def _note(self, test, kind, detail=""):
            began = self._started.pop(id(test), time.monotonic())
            self.cases.append((test, kind, detail, time.monotonic() - began))

        def addSuccess(self, test):
            super().addSuccess(test)
            self._note(test, "passed")

        def _told(self, found, case, err, test):
            # The text unittest has just formatted for its own report: formatting a traceback
            # again would cost as much once more.
            if found and found[-1][0] is case:
                return found[-1][1]
            return self._exc_info_to_string(err, test)

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._note(test, "failure", self._told(self.failures, test, err, test))

        def addError(self, test, err):
            super().addError(test, err)
            self._note(test, "error", self._told(self.errors, test, err, test))

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            self._note(test, "skipped", reason)

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            self._note(test, "skipped", "expected failure")

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self._note(test, "failure", "unexpected success")

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:
                failed = issubclass(err[0], test.failureException)
                found = self.failures if failed else self.errors
                self._note(
                    subtest, "failure" if failed else "error", self._told(found, subtest, err, test)
                )

    return JunitResult


def _case_names(test):
    ident = test.id()
    if "." not in ident:
        return "", ident
    classname, _, name = ident.rpartition(".")
    if " " in name or "(" in ident:  # a subtest: "module.Class.test (x=1)"
        head, _, sub = ident.partition(" ")
        classname, _, name = head.rpartition(".")
        name = f"{name} {sub}"
    return classname, name


# What XML 1.0 cannot hold (control characters, U+FFFE, U+FFFF, lone surrogates) is replaced,
# so that a test printing escape codes still leaves a readable report. No regular expression:
# compiling one over those ranges takes longer than many a test run.
_NOT_XML = {c: "\ufffd" for c in (*range(32), 0xFFFE, 0xFFFF) if c not in (9, 10, 13)}


def _xml(text, attribute=False):
    text = str(text).translate(_NOT_XML)
    if not text.isascii():  # a surrogate pair becomes its character, a lone one U+FFFD
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if attribute:
        text = text.replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;")
        text = text.replace("\t", "&#9;")
    return text


def _element(tag, attributes, body=None):
    pairs = "".join(f' {name}="{_xml(value, attribute=True)}"' for name, value in attributes)
    if body is None:
        return f"<{tag}{pairs} />"
    return f"<{tag}{pairs}>{body}</{tag}>"


def write_junit(path, cases, seconds):
    """The junit report, written by hand: an XML library would cost an import per run."""
    counts = {"failure": 0, "error": 0, "skipped": 0}
    rows = []
    for test, kind, detail, took in cases:
        classname, name = _case_names(test)
        child = ""
        if kind in counts:
            counts[kind] += 1
            lines = detail.strip().splitlines()
            message = (lines[-1] if lines else kind)[:200]
            child = _element(kind, [("message", message)], _xml(detail))
        attributes = [("classname", classname), ("name", name), ("time", f"{took:.3f}")]
        rows.append(_element("testcase", attributes, child))
    suite = [
        ("name", "unittest"),
        ("time", f"{seconds:.3f}"),
        ("tests", len(cases)),
        ("failures", counts["failure"]),
        ("errors", counts["error"]),
        ("skipped", counts["skipped"]),
    ]
    text = _element("testsuites", [], _element("testsuite", suite, "\n".join(["", *rows, ""])))
    part = path + ".part"
    with open(part, "w", encoding="utf-8") as handle:
        handle.write("<?xml version='1.0' encoding='utf-8'?>\n" + text + "\n")
    os.replace(part, path)


def run_unittest(args):
    _protect()
    import unittest

    sys.path.insert(0, os.getcwd())
    junit = os.environ.get(JUNIT_ENV, "")
    result_class = _junit_result_class(unittest.TextTestResult)
    started = time.monotonic()
    holder = {}

    class Runner(unittest.TextTestRunner):
        resultclass = result_class

        def __init__(self, *a, **kw):
            if os.environ.get(RUN_ALL_ENV):
                kw["failfast"] = False
            super().__init__(*a, **kw)

        def run(self, test):
            result = super().run(test)
            holder["result"] = result
            return result

    sys.argv = ["python -m unittest", *args]
    _freeze_startup()
    try:
        program = unittest.TestProgram(module=None, argv=sys.argv, testRunner=Runner, exit=False)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 2
    result = holder.get("result")
    if result is None:
        return 2
    if junit:
        write_junit(junit, result.cases, time.monotonic() - started)
    if getattr(program.result, "testsRun", 0) == 0 and not result.cases:
        return 5
    return 0 if result.wasSuccessful() else 1


def main():
    # The grading copy is thrown away after this run: bytecode written into it would be work
    # for nothing (and a file creation per module). Child processes still write theirs.
    sys.dont_write_bytecode = True
    if sys.path and _inside(sys.path[0], os.path.dirname(os.path.realpath(__file__))):
        del sys.path[0]
    mode, args = sys.argv[1], sys.argv[2:]
    try:
        if mode == "pytest":
            return run_pytest(args, insert_cwd=True)
        if mode == "pytest-bare":
            copy = _copy_root()
            outside = [p for p in sys.path if isinstance(p, str) and not _inside(p, copy)]
            if importlib.machinery.PathFinder.find_spec("pytest", outside) is None:
                # This interpreter has no pytest: run the one on PATH as the command said.
                os.execvp("pytest", ["pytest", *args])
            return run_pytest(args, insert_cwd=False)
        if mode == "unittest":
            return run_unittest(args)
    except Exception:
        import traceback

        traceback.print_exc()
        return 3
    print(f"hdrun: unknown mode {mode}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
