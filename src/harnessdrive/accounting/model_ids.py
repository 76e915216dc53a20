"""How a model id reported by a harness becomes the names looked up in the price book.

The steps, in order (docs/pricing.md repeats them):

1. Strip surrounding space and lower-case: ``Claude-Sonnet-4-5`` → ``claude-sonnet-4-5``.
2. Drop everything up to the last ``/``: ``anthropic/claude-sonnet-4-5`` → ``claude-sonnet-4-5``,
   ``models/gemini-2.5-pro`` → ``gemini-2.5-pro``. Each dropped segment that names a provider
   is kept as a *hint*; hints only break a tie between providers, they never select a price alone.
3. The names tried, most exact first: the id as it now stands; without an ``@`` suffix
   (``claude-sonnet-4-5@20250929`` → ``claude-sonnet-4-5``); then without a trailing date
   ``-YYYYMMDD`` or ``-YYYY-MM-DD`` (``claude-sonnet-4-5-20250929`` → ``claude-sonnet-4-5``).

A shorter name is tried only when no record at all carries the longer one, so a dated id that the
price data lists on its own (``gpt-4o-2024-05-13``) keeps its own price. Nothing else is trimmed:
no ``-latest``, no ``-preview``, no version digits, because those often name differently priced
models.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PROVIDER_ALIASES: dict[str, str] = {
    "gemini": "google",
    "google-gla": "google",
    "google-ai-studio": "google",
    "xai": "x-ai",
    "mistralai": "mistral",
    "moonshot": "moonshotai",
    "z-ai": "zai",
}
"""Other spellings of the providers that the bundled records use."""

_TRAILING_DATE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


def normalise_provider(provider: str | None) -> str | None:
    """Lower-case a provider id and map known spellings onto the bundled one."""
    if provider is None:
        return None
    cleaned = provider.strip().lower()
    if not cleaned:
        return None
    return PROVIDER_ALIASES.get(cleaned, cleaned)


@dataclass(frozen=True)
class ModelQuery:
    """The names to look up for one reported model id."""

    reported: str
    names: tuple[str, ...]
    """Candidate names, most exact first."""
    provider_hints: tuple[str, ...]
    """Providers named in a ``prefix/`` of the id, nearest the model name first."""


def parse_model_id(model: str) -> ModelQuery:
    """Turn a reported model id into the names to try (see the module docstring)."""
    text = model.strip().lower()
    hints: tuple[str, ...] = ()
    if "/" in text:
        prefix, _, text = text.rpartition("/")
        hints = tuple(
            hint
            for segment in reversed(prefix.split("/"))
            if (hint := normalise_provider(segment)) is not None
        )
    names: list[str] = []
    for name in (text, text.partition("@")[0]):
        if name and name not in names:
            names.append(name)
    undated = _TRAILING_DATE.sub("", names[-1]) if names else ""
    if undated and undated not in names:
        names.append(undated)
    return ModelQuery(reported=model, names=tuple(names), provider_hints=hints)
