"""Registrations by name, collected from every loaded plugin through one hook.

Two plugins registering the same name is an error that names both: a built-in never silently
wins over a plugin, nor a plugin over a built-in.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from harnessdrive.errors import PluginError
from harnessdrive.plugins.manager import (
    Distribution,
    plugin_distribution,
    plugin_manager,
    plugin_origin,
)


class Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


def registrations(hook: str, kind: type[T]) -> dict[str, T]:
    """Every ``kind`` registered through ``hook``, by name, in registration order."""
    return {name: item for name, (item, _owner) in _collect(hook, kind).items()}


def registered_by(hook: str, kind: type[T]) -> dict[str, str]:
    """Where each name registered through ``hook`` came from: ``built-in`` or its plugin."""
    return {name: plugin_origin(owner) for name, (_item, owner) in _collect(hook, kind).items()}


def supplied_by(hook: str, name: str) -> Distribution:
    """The distribution (and its version) whose plugin registered ``name`` through ``hook``;
    one with no name when no plugin registers it."""
    caller = getattr(plugin_manager().hook, hook)
    for impl in caller.get_hookimpls():
        if any(getattr(item, "name", None) == name for item in impl.function() or ()):
            return plugin_distribution(impl.plugin_name)
    return Distribution(None, None)


def _collect(hook: str, kind: type[T]) -> dict[str, tuple[T, str]]:
    caller = getattr(plugin_manager().hook, hook)
    found: dict[str, tuple[T, str]] = {}
    # Oldest first, so built-ins come before plugins in listings.
    for impl in reversed(caller.get_hookimpls()):
        items: Any = impl.function()
        for item in items or ():
            if not isinstance(item, kind):
                raise PluginError(
                    f"plugin {impl.plugin_name!r} registered {item!r} through {hook}, "
                    f"which is not a {kind.__name__}"
                )
            name = item.name
            if name in found:
                raise PluginError(
                    f"{kind.__name__} {name!r} is registered twice: by {found[name][1]!r} and by "
                    f"{impl.plugin_name!r}; uninstall one, or leave one out with "
                    "HARNESSDRIVE_PLUGINS"
                )
            found[name] = (item, impl.plugin_name)
    return found
