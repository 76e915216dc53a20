"""The hook specification every plugin implements a part of.

A plugin is a module (or object) with functions marked ``@hookimpl`` whose names are the hooks
below. Each hook returns a list of registrations; every registration has a ``name`` that is
unique across all loaded plugins. Third-party plugins are found through the ``harnessdrive``
entry-point group; harnessdrive's own built-ins are plugin modules registered the same way
(plugins/manager.py).
"""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT = "harnessdrive"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class HookSpecs:
    """The hooks. Each returns the registrations of one kind of extension."""

    @hookspec
    def harnessdrive_harnesses(self) -> list[Any]:
        """Harnesses: :class:`harnessdrive.harnesses.entry.HarnessEntry` items."""
        raise NotImplementedError

    @hookspec
    def harnessdrive_grader_kinds(self) -> list[Any]:
        """Grader kinds, by ``[grade] kind``: ``harnessdrive.grading.kinds.base.GraderKind``."""
        raise NotImplementedError

    @hookspec
    def harnessdrive_protocols(self) -> list[Any]:
        """Trial protocols: :class:`harnessdrive.protocols.base.TrialProtocol` items."""
        raise NotImplementedError

    @hookspec
    def harnessdrive_executors(self) -> list[Any]:
        """Executors: :class:`harnessdrive.executors.interface.ExecutorEntry` items."""
        raise NotImplementedError

    @hookspec
    def harnessdrive_reporters(self) -> list[Any]:
        """Report renderers: :class:`harnessdrive.report.renderers.Reporter` items."""
        raise NotImplementedError
