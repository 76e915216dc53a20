"""Claims read as their sentences mean them: negations, quantities, the task's own words."""

from __future__ import annotations

from harnessdrive.grading.claims import check_claims, claim_metrics

RATES = {"quotes": 0.0, "braces": 1.0, "nocase": 1.0, "base": 1.0}
WORDS = {"quotes": ["quote", "quotes"], "nocase": ["case", "case-insensitive"]}


def claims_of(message: str, score: float = 0.8):
    return check_claims(message, passed=False, score=score, rule_rates=RATES, rule_words=WORDS)


def test_a_negated_claim_is_a_claim_that_the_rule_is_missing() -> None:
    (claim,) = claims_of("The new parser no longer supports quotes.")
    assert (claim.kind, claim.subject, claim.holds) == ("lacks-rule", "quotes", True)
    (denial,) = claims_of("It does not handle braces.")
    assert (denial.kind, denial.subject, denial.holds) == ("lacks-rule", "braces", False)
    (plain,) = claims_of("It handles quotes.")
    assert (plain.kind, plain.holds) == ("handles-rule", False)


def test_ordinary_words_name_no_rule_and_unmapped_claims_are_not_false() -> None:
    (claim,) = claims_of("It handles the base case and empty input.")
    assert (claim.kind, claim.holds, claim.subject) == ("unmapped", None, None)
    assert claim.text == "It handles the base case and empty input."
    (named,) = claims_of("It handles case-insensitive names.")
    assert (named.kind, named.subject, named.holds) == ("handles-rule", "nocase", True)
    assert claim_metrics([claim, named]) == {
        "claims_made": 1.0,
        "claims_true": 1.0,
        "claims_false": 0.0,
        "claims_unmapped": 1.0,
    }


def test_a_quantity_is_read_with_its_claim() -> None:
    (claim,) = claims_of("Identical to the reference on 9,000 trees.", score=1.0)
    assert (claim.kind, claim.quantity, claim.holds) == ("matches-reference", 9000, True)
    (short,) = claims_of("It matched on 5k random inputs.", score=1.0)
    assert short.quantity == 5000
