"""Trial protocols by name, from every loaded plugin."""

from __future__ import annotations

from harnessdrive.errors import PluginError
from harnessdrive.plugins.registry import registrations
from harnessdrive.protocols.base import TrialProtocol

HOOK = "harnessdrive_protocols"


def protocols() -> dict[str, TrialProtocol]:
    # A runtime-checkable protocol, so registrations can check each item against it.
    return registrations(HOOK, TrialProtocol)  # type: ignore[type-abstract]


def get_protocol(name: str) -> TrialProtocol:
    """The protocol registered as ``name``."""
    found = protocols()
    protocol = found.get(name)
    if protocol is None:
        known = ", ".join(sorted(found)) or "none"
        raise PluginError(f"no trial protocol named {name!r} is registered (registered: {known})")
    return protocol
