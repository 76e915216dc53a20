"""The one plugin manager: harnessdrive's built-in plugin modules, then installed plugins.

Installed plugins are the entry points of the ``harnessdrive`` group. ``HARNESSDRIVE_PLUGINS``
limits which of them load: unset loads every one, a comma-separated list of entry-point names
loads only those, and an empty value (or ``none``) loads none. Built-ins always load.
"""

from __future__ import annotations

import functools
import importlib
import os
import types
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, entry_points, packages_distributions, version
from typing import Any

import pluggy

from harnessdrive.errors import PluginError
from harnessdrive.plugins.hookspecs import PROJECT, HookSpecs, hookimpl

ENTRY_POINT_GROUP = "harnessdrive"
PLUGINS_VARIABLE = "HARNESSDRIVE_PLUGINS"

BUILTIN_PLUGINS: dict[str, str] = {
    "harnessdrive.harnesses.builtin": "harnessdrive_harnesses",
    "harnessdrive.grading.kinds.builtin": "harnessdrive_grader_kinds",
    "harnessdrive.report.builtin": "harnessdrive_reporters",
    "harnessdrive.executors.builtin": "harnessdrive_executors",
    "harnessdrive.protocols.builtin": "harnessdrive_protocols",
    "harnessdrive.audit.builtin": "harnessdrive_exploits",
}
"""harnessdrive's own plugin modules, each registering one area's built-ins through its hook.
A module is imported when its hook is first called: finding a harness imports no report
renderer, executor or grader kind (a dry run of the pytest plugin pays for what it uses)."""


def _deferred(module_name: str, hook: str) -> object:
    """A stand-in for a built-in plugin module that imports it on the first call of its hook."""

    def call() -> Any:
        return getattr(importlib.import_module(module_name), hook)()

    call.__name__ = call.__qualname__ = hook
    return types.SimpleNamespace(**{hook: hookimpl(call)})


def allowed_plugins() -> frozenset[str] | None:
    """The entry-point names ``HARNESSDRIVE_PLUGINS`` allows; None allows every one."""
    value = os.environ.get(PLUGINS_VARIABLE)
    if value is None:
        return None
    names = {part.strip() for part in value.split(",") if part.strip()}
    return frozenset(names - {"none"})


def plugin_manager() -> pluggy.PluginManager:
    """The loaded plugins (built once per process; :func:`reset_plugins` forgets them)."""
    return _loaded()[0]


def plugin_origin(plugin_name: str) -> str:
    """``built-in``, or ``plugin NAME (distribution VERSION)`` for an installed plugin."""
    return _loaded()[1].get(plugin_name, "built-in")


@dataclass(frozen=True)
class Distribution:
    """The installed distribution a plugin came from: ``harnessdrive`` for the built-ins."""

    name: str | None
    """None for a plugin no installed distribution holds (one registered by hand)."""
    version: str | None


def plugin_distribution(plugin_name: str) -> Distribution:
    """The distribution that supplied the plugin registered as ``plugin_name``."""
    if plugin_name in BUILTIN_PLUGINS:
        return Distribution(PROJECT, _version_of(PROJECT))
    found = _loaded()[2].get(plugin_name)
    if found is not None:
        return found
    # Registered without an entry point: the distribution that installed its module, if any.
    plugin = plugin_manager().get_plugin(plugin_name)
    module = getattr(plugin, "__module__", None) or getattr(plugin, "__name__", None) or ""
    names = _distributions_by_package().get(str(module).partition(".")[0], [])
    if not names:
        return Distribution(None, None)
    return Distribution(names[0], _version_of(names[0]))


@functools.cache
def _distributions_by_package() -> dict[str, list[str]]:
    return dict(packages_distributions())


def _version_of(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:  # run from a source tree that was never installed
        return None


@functools.cache
def _loaded() -> tuple[pluggy.PluginManager, dict[str, str], dict[str, Distribution]]:
    origins: dict[str, str] = {}
    distributions: dict[str, Distribution] = {}
    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(HookSpecs)
    for module_name, hook in BUILTIN_PLUGINS.items():
        manager.register(_deferred(module_name, hook), name=module_name)
    allowed = allowed_plugins()
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if allowed is not None and entry.name not in allowed:
            continue
        try:
            plugin = entry.load()
        except Exception as exc:  # a broken plugin is the user's to fix: say which, in a line
            raise PluginError(
                f"plugin {entry.name!r} ({entry.value}) cannot be loaded: {exc}"
            ) from None
        if manager.is_registered(plugin) or getattr(plugin, "__name__", "") in BUILTIN_PLUGINS:
            continue
        plugin_name = f"{ENTRY_POINT_GROUP}:{entry.name}"
        manager.register(plugin, name=plugin_name)
        dist = f" ({entry.dist.name} {entry.dist.version})" if entry.dist is not None else ""
        origins[plugin_name] = f"plugin {entry.name}{dist}"
        if entry.dist is not None:
            distributions[plugin_name] = Distribution(entry.dist.name, entry.dist.version)
    return manager, origins, distributions


def reset_plugins() -> None:
    """Forget the loaded plugins, so the next lookup reads the environment again."""
    _loaded.cache_clear()
