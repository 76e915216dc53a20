"""``provenance`` of a result: what made a trial's arm what it was, recorded so that two arms
can be diffed beyond what the matrix says they differ in (docs/results.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Provenance(BaseModel):
    """Recorded per trial; every field is None or empty where it could not be known."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    harnessdrive_version: str | None = None
    cli_version: str | None = None
    """The agent CLI's version, as it printed it."""
    config_hash: str | None = None
    """A hash of the command line, environment and config files the adapter gave the CLI,
    each trial's own paths, session id, endpoint address and key left out."""
    tools: tuple[str, ...] = ()
    """The permission setting and the tool allow-list passed to the CLI."""
    instruction_files: dict[str, str] = {}
    """Each instruction file (``AGENTS.md``, ``CLAUDE.md``, ...) in the starting files, by path,
    with a hash of its content."""
    instructions_hash: str | None = None
    """One hash over ``instruction_files``; None when there are none."""
    start_tree: str | None = None
    """The git tree of the starting files the agent got (a treatment included)."""
    models_reported: tuple[str, ...] = ()
    """The model ids the API reported in its answers, in order of first use."""
    sandbox: str | None = None


class Supplied(BaseModel):
    """The installed distribution that supplied one registered harness, grader kind or protocol
    (``harnessdrive`` for its built-ins)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """The registered name (``claude``, ``tests``, ``single``)."""
    distribution: str | None = None
    """None where no installed distribution holds its plugin (one registered by hand)."""
    version: str | None = None


class Suppliers(BaseModel):
    """Where a trial's harness, grader kind and protocol came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    harness: Supplied | None = None
    grader_kind: Supplied | None = None
    protocol: Supplied | None = None
