from __future__ import annotations

import pytest

from harnessdrive.accounting.model_ids import normalise_provider, parse_model_id


@pytest.mark.parametrize(
    ("reported", "names", "hints"),
    [
        ("claude-sonnet-4-5", ("claude-sonnet-4-5",), ()),
        ("  Claude-Sonnet-4-5 ", ("claude-sonnet-4-5",), ()),
        ("claude-sonnet-4-5-20250929", ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"), ()),
        ("gpt-5-2025-08-07", ("gpt-5-2025-08-07", "gpt-5"), ()),
        ("claude-sonnet-4-5@20250929", ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"), ()),
        ("anthropic/claude-sonnet-4-5", ("claude-sonnet-4-5",), ("anthropic",)),
        ("gemini/gemini-2.5-pro", ("gemini-2.5-pro",), ("google",)),
        ("models/gemini-2.5-pro", ("gemini-2.5-pro",), ("models",)),
        ("openrouter/openai/gpt-5", ("gpt-5",), ("openai", "openrouter")),
        # Only full dates are trimmed: four-digit suffixes name differently priced models.
        ("gpt-3.5-turbo-0613", ("gpt-3.5-turbo-0613",), ()),
        ("gemini-2.5-flash-preview-09-2025", ("gemini-2.5-flash-preview-09-2025",), ()),
        ("claude-3-5-haiku-latest", ("claude-3-5-haiku-latest",), ()),
    ],
)
def test_names_tried_most_exact_first(
    reported: str, names: tuple[str, ...], hints: tuple[str, ...]
) -> None:
    query = parse_model_id(reported)
    assert query.names == names
    assert query.provider_hints == hints
    assert query.reported == reported


@pytest.mark.parametrize(
    ("given", "normal"),
    [
        ("Anthropic", "anthropic"),
        ("gemini", "google"),
        ("google-gla", "google"),
        ("xAI", "x-ai"),
        ("mistralai", "mistral"),
        ("mock", "mock"),
        ("  ", None),
        (None, None),
    ],
)
def test_provider_spellings(given: str | None, normal: str | None) -> None:
    assert normalise_provider(given) == normal
