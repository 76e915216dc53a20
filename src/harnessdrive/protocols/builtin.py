"""harnessdrive's own trial protocols, registered like any plugin's."""

from __future__ import annotations

from harnessdrive.plugins.hookspecs import hookimpl
from harnessdrive.protocols.base import TrialProtocol
from harnessdrive.protocols.improve.protocol import ImproveProtocol
from harnessdrive.protocols.single import SingleAttempt


@hookimpl
def harnessdrive_protocols() -> list[TrialProtocol]:
    return [SingleAttempt(), ImproveProtocol()]
