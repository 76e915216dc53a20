"""The model catalogue: each priced model's line and tier, and its release date and training
cutoff where the provider published them.

Line and tier come from the model's name, by the naming each provider uses: a tier is a role in
a provider's range (1 the fastest and cheapest, such as Haiku, Luna, Flash-Lite; 4 the most
capable, such as Fable, Astra), never a price. Release dates and cutoffs come only from
``data/model_facts.json``, each with the page it was read from, or from the user's own lines
(``harness/model: line=sol tier=3 released=2026-10-20 cutoff=2026-06``); nothing is guessed.
The catalogue names the plugin's default matrix, offers "did you mean" for an unknown model, and
says which tasks are newer than a model's cutoff."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from importlib import resources

from harnessdrive.errors import UserError

# (pattern on the model id, provider, {line word: tier}); the first matching pattern names the
# line by its captured word.
_NAMING: tuple[tuple[re.Pattern[str], str, dict[str, int]], ...] = (
    (
        re.compile(r"^claude-(?:[\d-]+-)?(haiku|sonnet|opus|fable|mythos)\b"),
        "anthropic",
        {"haiku": 1, "sonnet": 2, "opus": 3, "fable": 4, "mythos": 4},
    ),
    (
        re.compile(r"^gpt-[\d.]+-(luna|terra|sol|astra|nano|mini|pro)\b"),
        "openai",
        {"nano": 1, "luna": 1, "mini": 1, "terra": 2, "sol": 3, "pro": 4, "astra": 4},
    ),
    (
        re.compile(r"^gemini-[\d.]+-(flash-lite|flash|pro)\b"),
        "google",
        {"flash-lite": 1, "flash": 2, "pro": 3},
    ),
)
_CUTOFF = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


@dataclass(frozen=True)
class ModelEntry:
    model: str
    provider: str | None
    line: str | None = None
    tier: int | None = None
    released: date | None = None
    cutoff: str | None = None
    """The training (reliable knowledge) cutoff, ``YYYY-MM``, where published."""
    source: str | None = None
    """Where the release date or cutoff was read."""

    @property
    def version(self) -> tuple[int, ...]:
        """The numbers in the id, for "newest in its line" (``claude-sonnet-5-5`` > ``-5``)."""
        return tuple(int(n) for n in re.findall(r"\d+", self.model))

    def describe(self) -> str:
        parts = []
        if self.line:
            parts.append(f"{self.line} line, tier {self.tier}")
        if self.released:
            parts.append(f"released {self.released.isoformat()}")
        if self.cutoff:
            parts.append(f"training cutoff {self.cutoff}")
        return f"{self.model}: " + ("; ".join(parts) or "not catalogued")


def named_entry(model: str, provider: str | None = None) -> ModelEntry:
    """What the model's name says: its line and tier, when the provider's naming is known."""
    for pattern, owner, tiers in _NAMING:
        found = pattern.match(model)
        if found and (provider is None or provider == owner):
            word = found.group(1)
            return ModelEntry(model, owner, line=word, tier=tiers[word])
    return ModelEntry(model, provider)


class Catalogue:
    """Every model of the price book, with what its name says and what was published."""

    def __init__(self, entries: Iterable[ModelEntry]) -> None:
        self.entries: dict[str, ModelEntry] = {}
        for entry in entries:
            self.entries[entry.model] = entry

    @classmethod
    def of(cls, models: Iterable[tuple[str, str | None]]) -> Catalogue:
        """The catalogue of these (model, provider) pairs, with the bundled published facts."""
        entries = {model: named_entry(model, provider) for model, provider in models}
        for fact in _bundled_facts():
            model = str(fact["model"])
            entry = entries.get(model) or named_entry(model)
            entries[model] = replace(
                entry,
                cutoff=fact.get("cutoff") or entry.cutoff,
                released=date.fromisoformat(fact["released"])
                if fact.get("released")
                else entry.released,
                source=str(fact["source"]),
            )
        return cls(entries.values())

    def get(self, model: str) -> ModelEntry | None:
        return self.entries.get(model)

    def with_lines(self, lines: Sequence[str]) -> Catalogue:
        """The catalogue with the user's own entries (``[harness/]model: key=value ...``; keys
        ``line``, ``tier``, ``released``, ``cutoff``) over the bundled ones."""
        entries = dict(self.entries)
        for line in lines:
            if line.strip():
                entry = parse_line(line, entries)
                entries[entry.model] = entry
        return Catalogue(entries.values())

    def newest(
        self, provider: str, tier: int, among: Collection[str] | None = None
    ) -> ModelEntry | None:
        """The newest model of a tier (of the models ``among``, when given): the latest
        release date where published, else the highest version in its id."""
        found = [
            e
            for e in self.entries.values()
            if e.provider == provider and e.tier == tier and (among is None or e.model in among)
        ]
        if not found:
            return None
        return max(found, key=lambda e: (e.released or date.min, e.version, e.model))

    def models(self) -> list[str]:
        return sorted(self.entries)


def parse_line(line: str, known: dict[str, ModelEntry]) -> ModelEntry:
    """One user line: ``codex/gpt-6.2-sol: line=sol tier=3 released=2026-10-20 cutoff=2026-06``."""
    head, sep, rest = line.partition(":")
    model = head.strip().rpartition("/")[2]
    if not sep or not model:
        raise UserError(f"model catalogue line {line!r}: write 'model: line=L tier=N ...'")
    entry = replace(known.get(model) or named_entry(model), source="user catalogue line")
    for pair in rest.split():
        key, eq, value = pair.partition("=")
        try:
            if not eq:
                raise ValueError("write key=value")
            entry = _with(entry, key, value)
        except ValueError as exc:
            raise UserError(f"model catalogue line {line!r}: {pair!r}: {exc}") from None
    return entry


def _with(entry: ModelEntry, key: str, value: str) -> ModelEntry:
    if key == "line":
        return replace(entry, line=value)
    if key == "tier":
        tier = int(value)
        if not 1 <= tier <= 4:
            raise ValueError(f"a tier is 1 to 4, not {tier}")
        return replace(entry, tier=tier)
    if key == "released":
        return replace(entry, released=date.fromisoformat(value))
    if key == "cutoff":
        if not _CUTOFF.match(value):
            raise ValueError(f"a cutoff is YYYY-MM, not {value!r}")
        return replace(entry, cutoff=value)
    raise ValueError("the keys are line=, tier=, released= and cutoff=")


def newer_than_cutoff(day: date, entry: ModelEntry) -> bool | None:
    """Whether something dated ``day`` (a mined task's commit) is after the model's training
    cutoff, so the model cannot have seen it; None when no cutoff is published."""
    if entry.cutoff is None:
        return None
    year, month = (int(p) for p in entry.cutoff.split("-"))
    return (day.year, day.month) > (year, month)


def _bundled_facts() -> list[dict[str, str]]:
    text = resources.files("harnessdrive.accounting").joinpath("data/model_facts.json").read_text()
    facts: list[dict[str, str]] = json.loads(text)["facts"]
    return facts
