"""Public test doubles for harnessdrive and its plugins: a scripted model server, scripted agents,
a repository builder, suites, price files and wheels for tests."""

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
