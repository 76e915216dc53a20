"""What a harness reports about how it ran an agent, beyond the transcript: the effective
configuration's hash and the permissions and tool allow-list it passed (docs/matrix.md)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunSetting:
    """How one run was configured, in a form two runs of the same arm agree on."""

    config_hash: str | None = None
    """A hash of the command line, environment and config files the adapter gave the CLI,
    with each trial's own paths, session id, endpoint address and key and the spend cap left
    (``--max-budget-usd``) left out."""
    tools: tuple[str, ...] = ()
    """The permission mode and tool allow-list passed (``--allowedTools Bash``), in order."""
    config_parts: tuple[tuple[str, str], ...] = ()
    """Each setting the hash covers (``--model``, ``env FOO``, ``file .x/y.json``) with a short
    hash of its value, so that where two hashes differ the setting can be named."""
