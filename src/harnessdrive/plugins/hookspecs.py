"""The hook specification every plugin implements a part of.

A plugin is a module (or object) with functions marked ``@hookimpl`` whose names are the hooks
below. Each hook returns a list of registrations; every registration has a ``name`` that is
unique across all loaded plugins. Third-party plugins are found through the ``harnessdrive``
entry-point group; harnessdrive's own built-ins are plugin modules registered the same way
(plugins/manager.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # the registrations' types, for a plugin's own type checker
    from harnessdrive.audit.exploits import Exploit
    from harnessdrive.executors.interface import ExecutorEntry
    from harnessdrive.grading.kinds.base import GraderKind
    from harnessdrive.harnesses.entry import HarnessEntry
    from harnessdrive.protocols.base import TrialProtocol
    from harnessdrive.report.renderers import Reporter

PROJECT = "harnessdrive"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class HookSpecs:
    """The hooks. Each returns the registrations of one kind of extension; the return types
    are declared, so a plugin's own type checker catches a registration of the wrong type."""

    @hookspec
    def harnessdrive_harnesses(self) -> list[HarnessEntry]:
        """Harnesses: :class:`harnessdrive.harnesses.entry.HarnessEntry` items."""
        raise NotImplementedError

    @hookspec
    def harnessdrive_grader_kinds(self) -> list[GraderKind[Any]]:
        """Grader kinds, by ``[grade] kind``: ``harnessdrive.grading.kinds.base.GraderKind``."""
        raise NotImplementedError

    @hookspec
    def harnessdrive_protocols(self) -> list[TrialProtocol]:
        """Trial protocols: :class:`harnessdrive.protocols.base.TrialProtocol` items."""
        raise NotImplementedError

    @hookspec
    def harnessdrive_executors(self) -> list[ExecutorEntry]:
        """Executors: :class:`harnessdrive.executors.interface.ExecutorEntry` items."""
        raise NotImplementedError

    @hookspec
    def harnessdrive_reporters(self) -> list[Reporter]:
        """Report renderers: :class:`harnessdrive.report.renderers.Reporter` items."""
        raise NotImplementedError

    @hookspec
    def harnessdrive_exploits(self) -> list[Exploit]:
        """Exploits the task audit runs: :class:`harnessdrive.audit.exploits.Exploit` items."""
        raise NotImplementedError
