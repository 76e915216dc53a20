"""Public test doubles for harnessdrive and its plugins: a scripted model server, scripted agents,
a repository builder, suites, price files and wheels for tests.

Every name is imported on first use, so a module of this package that needs only the standard
library (:mod:`harnessdrive.testing.clis`, which installs the CLIs before anything else is) runs
before the package's dependencies are installed.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harnessdrive.harnesses.scripted import (
        BreakerAgent,
        CrasherAgent,
        NoopAgent,
        ReferenceAgent,
        SleeperAgent,
        TampererAgent,
    )
    from harnessdrive.testing.agents import SpendingAgent
    from harnessdrive.testing.model_server import (
        EditFile,
        ModelServer,
        Script,
        Shell,
        Turn,
        WriteFile,
        load_script,
    )
    from harnessdrive.testing.prices import write_mock_prices
    from harnessdrive.testing.repo_builder import RepoBuilder
    from harnessdrive.testing.suites import TaskFiles, write_suite, write_task
    from harnessdrive.testing.wheels import make_wheel

_PUBLIC: dict[str, str] = {
    "BreakerAgent": "harnessdrive.harnesses.scripted",
    "CrasherAgent": "harnessdrive.harnesses.scripted",
    "EditFile": "harnessdrive.testing.model_server",
    "ModelServer": "harnessdrive.testing.model_server",
    "NoopAgent": "harnessdrive.harnesses.scripted",
    "ReferenceAgent": "harnessdrive.harnesses.scripted",
    "RepoBuilder": "harnessdrive.testing.repo_builder",
    "Script": "harnessdrive.testing.model_server",
    "Shell": "harnessdrive.testing.model_server",
    "SleeperAgent": "harnessdrive.harnesses.scripted",
    "SpendingAgent": "harnessdrive.testing.agents",
    "TampererAgent": "harnessdrive.harnesses.scripted",
    "TaskFiles": "harnessdrive.testing.suites",
    "Turn": "harnessdrive.testing.model_server",
    "WriteFile": "harnessdrive.testing.model_server",
    "load_script": "harnessdrive.testing.model_server",
    "make_wheel": "harnessdrive.testing.wheels",
    "write_mock_prices": "harnessdrive.testing.prices",
    "write_suite": "harnessdrive.testing.suites",
    "write_task": "harnessdrive.testing.suites",
}
"""Each public name and the module it lives in."""

__all__ = [
    "BreakerAgent",
    "CrasherAgent",
    "EditFile",
    "ModelServer",
    "NoopAgent",
    "ReferenceAgent",
    "RepoBuilder",
    "Script",
    "Shell",
    "SleeperAgent",
    "SpendingAgent",
    "TampererAgent",
    "TaskFiles",
    "Turn",
    "WriteFile",
    "load_script",
    "make_wheel",
    "write_mock_prices",
    "write_suite",
    "write_task",
]


def __getattr__(name: str) -> Any:
    where = _PUBLIC.get(name)
    if where is None:
        raise AttributeError(f"module 'harnessdrive.testing' has no attribute {name!r}")
    value = getattr(import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
