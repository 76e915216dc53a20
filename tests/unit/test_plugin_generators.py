"""The plugin's case generators: deterministic tables, seeded inputs and text mutations."""

from __future__ import annotations

import random

import pytest

from harnessdrive.errors import UserError
from harnessdrive.pytest_plugin.generators import adversarial, generated, mutations, table
from harnessdrive.pytest_plugin.parameters import parameter_sets


def sets(mark: pytest.MarkDecorator) -> list[tuple[str, dict[str, object]]]:
    @mark
    def eval_case(output: object, **values: object) -> None:
        pass

    return [(s.id, s.values) for s in parameter_sets(eval_case)]


def test_a_table_names_its_cases_by_its_keys() -> None:
    assert sets(table("city", {"north": "Oslo", "south": "Rome"})) == [
        ("north", {"city": "Oslo"}),
        ("south", {"city": "Rome"}),
    ]
    assert sets(table("n", [3, 4])) == [("3", {"n": 3}), ("4", {"n": 4})]
    with pytest.raises(UserError):
        table("n", [])


def test_a_seeded_generator_is_stable_and_grows_without_changing_earlier_cases() -> None:
    def make(rng: random.Random) -> int:
        return rng.randrange(1_000_000)

    three = sets(generated("n", make, count=3, seed=7))
    five = sets(generated("n", make, count=5, seed=7))
    assert five[:3] == three
    assert [i for i, _ in three] == ["seed7-0", "seed7-1", "seed7-2"]
    assert sets(generated("n", make, count=3, seed=8)) != three


def test_mutations_keep_the_request_and_change_its_surface() -> None:
    text = "Fix the add function in calc.py"
    found = dict(
        zip(
            ["typo", "shout", "distraction"],
            mutations(text, kinds=["typo", "shout", "distraction"]),
            strict=True,
        )
    )
    assert found["typo"] != text and sorted(found["typo"]) == sorted(text)
    assert found["shout"] == text.upper()
    assert found["distraction"].startswith(text + "\n\n")
    assert mutations(text, seed=3) == mutations(text, seed=3)
    with pytest.raises(UserError, match="unknown mutator"):
        mutations(text, kinds=["rot13"])
    ids = [i for i, _ in sets(adversarial("prompt", text, kinds=["typo", "filler"]))]
    assert ids == ["original", "typo", "filler"]
