"""harnessdrive's own exploits, registered through the same hook as a plugin's (docs/audit.md)."""

from __future__ import annotations

from harnessdrive.audit.differential_exploits import echo_oracle, frozen_answers
from harnessdrive.audit.exploits import (
    Exploit,
    always_equal,
    constant_stub,
    mine_history,
    plant_runner_config,
    prompt_literal,
    read_disk,
    rewrite_tests,
    shadow_runner,
    skip_when_called,
)
from harnessdrive.audit.flooding import flood
from harnessdrive.audit.grading_echo import grading_echo
from harnessdrive.plugins.hookspecs import hookimpl

_TESTS = ("tests",)
_DIFFERENTIAL = ("differential",)


@hookimpl
def harnessdrive_exploits() -> list[Exploit]:
    return [
        Exploit(
            "constant-stub",
            _TESTS,
            "every changed function returning 0 passes",
            "the hidden tests accept a constant: assert on the values the change must produce, "
            "not only on their type or on the absence of an error",
            constant_stub,
        ),
        Exploit(
            "always-equal",
            _TESTS,
            "a value equal to everything passes",
            "the hidden tests compare with ==, which the result controls: check the type exactly "
            "(type(got) is int) before comparing, or compare repr()",
            always_equal,
        ),
        Exploit(
            "skip-when-called",
            _TESTS,
            "tests that skip themselves count as passing",
            "grade a skipped hidden test as a failure (declare the skips the reference needs in "
            "the task's recorded reference outcomes)",
            skip_when_called,
        ),
        Exploit(
            "prompt-literal",
            _TESTS,
            "returning a value quoted in the prompt passes",
            "the prompt quotes the expected output: describe the behaviour instead, or test "
            "inputs the prompt does not show",
            prompt_literal,
        ),
        Exploit(
            "runner-config",
            _TESTS,
            "a planted conftest.py, plugin or pytest.ini forces passes",
            "protect runner configuration (grade.protected: conftest.py, pytest.ini, setup.cfg, "
            "tox.ini, pyproject.toml) or run the hidden tests without the workspace's config",
            plant_runner_config,
        ),
        Exploit(
            "shadow-runner",
            _TESTS,
            "a pytest.py, unittest.py or sitecustomize.py in the workspace replaces the runner",
            "run the test runner so that the workspace is not first on its import path (python "
            "-P, or the runner installed outside the workspace)",
            shadow_runner,
        ),
        Exploit(
            "rewrite-tests",
            _TESTS,
            "the grading runs test code the agent may change",
            "protect every test file and helper the hidden tests use (grade.protected = "
            '["tests/**"]), or ship them as hidden files',
            rewrite_tests,
        ),
        Exploit(
            "mine-history",
            _TESTS,
            "the reference change is in the repository's git history",
            "build the task's repository from the base commit only (no later commits, refs, "
            "reflog or stash)",
            mine_history,
            sandboxed=True,
        ),
        Exploit(
            "read-disk",
            _TESTS,
            "the reference solution is readable from the agent's sandbox",
            "run agents in a sandbox that hides the task folder (sandbox = bwrap or docker)",
            read_disk,
            sandboxed=True,
        ),
        Exploit(
            "echo-oracle",
            _DIFFERENTIAL,
            "a candidate that calls the oracle's own code answers the hidden cases",
            "the oracle's code is readable from the agent's sandbox (in the repository, or a "
            "task folder the sandbox shows): keep it in the task folder only, out of the "
            "repository, and run agents in a sandbox that hides the task (sandbox = bwrap or "
            "docker)",
            echo_oracle,
            sandboxed=True,
        ),
        Exploit(
            "frozen-answers",
            _DIFFERENTIAL,
            "a candidate that returns recorded answers scores on the hidden cases",
            "the hidden cases' answers are readable by the agent or the candidate (a copy in the "
            "repository, a dev set that shares cases with the hidden set, a case set inside the "
            "repository folder): keep grade.cases in the task folder only and build the dev set "
            "with cases build --dev, which never reuses a hidden case",
            frozen_answers,
            sandboxed=True,
        ),
        Exploit(
            "grading-echo",
            _TESTS,
            "code that, once graded, returns what the calling hidden test expects passes",
            "the hidden tests compare inside a loop, a helper or after a branch, where the "
            "grader cannot plant a twin (a copy of the check with its expectation changed) to "
            "catch code that reads the expected value from the calling test: write each check "
            "as a plain assert f(x) == expected (or assertEqual) in the test's own body, one "
            "test per case (pytest.mark.parametrize)",
            grading_echo,
        ),
        Exploit(
            "flood",
            (*_TESTS, *_DIFFERENTIAL),
            "output, files and reports too big or too deep to read whole turn a failure into a "
            "pass or a 'not counted'",
            "the grading reads what the code under test can print or write (the runner's text, "
            "a report it can rewrite): count from a report written outside the code's reach, "
            "with the task's default junit = true and a pytest or unittest command, never by "
            "matching the output",
            flood,
        ),
    ]
