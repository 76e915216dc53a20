"""The model catalogue: lines and tiers from each provider's naming, dates only where published
or given by the user, the newest model of a tier, and cutoffs against a task's date."""

from __future__ import annotations

from datetime import date

import pytest

from harnessdrive.accounting import PriceBook
from harnessdrive.accounting.catalogue import Catalogue, ModelEntry, named_entry, newer_than_cutoff
from harnessdrive.errors import UserError


def bundled() -> Catalogue:
    return Catalogue.of((r.model, r.provider) for r in PriceBook.bundled().records)


@pytest.mark.parametrize(
    ("model", "line", "tier"),
    [
        ("claude-haiku-4-5", "haiku", 1),
        ("claude-sonnet-5", "sonnet", 2),
        ("claude-3-5-sonnet", "sonnet", 2),
        ("claude-opus-5-5", "opus", 3),
        ("claude-fable-5-1", "fable", 4),
        ("gpt-6-luna", "luna", 1),
        ("gpt-6.1-terra", "terra", 2),
        ("gpt-6-sol", "sol", 3),
        ("gpt-6-astra", "astra", 4),
        ("gpt-5.4-mini", "mini", 1),
        ("gemini-3.5-flash-lite", "flash-lite", 1),
        ("gemini-3.5-flash", "flash", 2),
        ("gemini-2.5-pro", "pro", 3),
        ("gpt-5.5", None, None),  # no line in its name: not guessed
        ("kimi-k2", None, None),
    ],
)
def test_a_model_s_name_gives_its_line_and_tier(model: str, line: str | None, tier: int) -> None:
    entry = named_entry(model)
    assert (entry.line, entry.tier) == (line, tier)


def test_published_cutoffs_come_with_their_source_and_nothing_else_is_dated() -> None:
    catalogue = bundled()
    sonnet = catalogue.get("claude-sonnet-5")
    assert sonnet is not None and sonnet.cutoff == "2026-01"
    assert sonnet.source is not None and sonnet.source.startswith("https://platform.claude.com/")
    assert sonnet.describe() == "claude-sonnet-5: sonnet line, tier 2; training cutoff 2026-01"
    dated = [e.model for e in catalogue.entries.values() if e.cutoff or e.released]
    assert all(catalogue.entries[m].source for m in dated)
    terra = catalogue.get("gpt-6.1-terra")
    assert terra is not None and (terra.cutoff, terra.released) == (None, None)


def test_the_newest_of_a_tier_is_by_release_date_then_by_version() -> None:
    catalogue = bundled()
    newest = catalogue.newest("anthropic", 2)
    assert newest is not None and newest.model == "claude-sonnet-5-5"
    # A release date the user gives outranks a higher version number without one.
    dated = catalogue.with_lines(["claude/claude-sonnet-4-6: released=2026-11-30"])
    newest = dated.newest("anthropic", 2)
    assert newest is not None and newest.model == "claude-sonnet-4-6"
    assert catalogue.newest("anthropic", 7) is None


def test_user_lines_add_and_override_entries() -> None:
    catalogue = bundled().with_lines(
        [
            "codex/gpt-6.2-sol: line=sol tier=3 released=2026-10-20 cutoff=2026-06",
            "claude-sonnet-5: tier=2 cutoff=2026-02",
            "",
        ]
    )
    added = catalogue.get("gpt-6.2-sol")
    assert added == ModelEntry(
        "gpt-6.2-sol",
        "openai",
        line="sol",
        tier=3,
        released=date(2026, 10, 20),
        cutoff="2026-06",
        source="user catalogue line",
    )
    changed = catalogue.get("claude-sonnet-5")
    assert changed is not None and changed.cutoff == "2026-02"


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        ("gpt-6.2-sol line=sol", "write 'model: line=L tier=N"),
        ("gpt-6.2-sol: tier=9", "a tier is 1 to 4"),
        ("gpt-6.2-sol: cutoff=June", "a cutoff is YYYY-MM"),
        ("gpt-6.2-sol: released=2026-13-01", "'released=2026-13-01'"),
        ("gpt-6.2-sol: price=3", "the keys are line=, tier=, released= and cutoff="),
        ("gpt-6.2-sol: sol", "write key=value"),
    ],
)
def test_a_bad_user_line_is_one_clear_error(line: str, complaint: str) -> None:
    with pytest.raises(UserError, match="model catalogue line") as refused:
        bundled().with_lines([line])
    assert complaint in str(refused.value)


def test_a_date_is_newer_than_a_cutoff_only_past_its_month() -> None:
    entry = ModelEntry("m", None, cutoff="2026-01")
    assert newer_than_cutoff(date(2026, 2, 1), entry) is True
    assert newer_than_cutoff(date(2026, 1, 31), entry) is False
    assert newer_than_cutoff(date(2026, 2, 1), ModelEntry("m", None)) is None
