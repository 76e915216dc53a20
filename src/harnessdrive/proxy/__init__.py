"""harnessdrive's forwarding proxy for agents' model traffic, and what it saw."""

from harnessdrive.proxy.server import ModelProxy
from harnessdrive.proxy.traffic import CALLS_FILE, LOAD_STATUSES, ProxiedCall, Traffic

__all__ = ["CALLS_FILE", "LOAD_STATUSES", "ModelProxy", "ProxiedCall", "Traffic"]
