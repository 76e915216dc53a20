"""Provider-neutral record of an agent run: events and per-call usage."""

from harnessdrive.transcript.models import Event, ModelCall, Transcript, Usage

__all__ = ["Event", "ModelCall", "Transcript", "Usage"]
