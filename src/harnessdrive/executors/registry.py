"""Executors by name, from every loaded plugin."""

from __future__ import annotations

from harnessdrive.errors import PluginError
from harnessdrive.executors.interface import Executor, ExecutorEntry
from harnessdrive.plugins.registry import registrations
from harnessdrive.trial.job import WorkerSettings


def executor_entries() -> dict[str, ExecutorEntry]:
    return registrations("harnessdrive_executors", ExecutorEntry)


def executor_entry(name: str) -> ExecutorEntry:
    """The registered executor ``name``; refuses an unknown name in one line."""
    entries = executor_entries()
    entry = entries.get(name)
    if entry is None:
        known = ", ".join(sorted(entries)) or "none"
        raise PluginError(f"no executor named {name!r} is registered (registered: {known})")
    return entry


def create_executor(name: str, settings: WorkerSettings) -> Executor:
    """A new executor of the registered kind ``name``."""
    return executor_entry(name).create(settings)
