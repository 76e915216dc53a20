"""Checkable claims in the agent's final message, checked against the graded result.

Recognised claims (case-insensitive):

- ``matches-reference``: "identical / matches / agrees ... on N ... cases|inputs|trees|tests"
  (or "matches the reference"); true when every graded case passed (score 1).
- ``tests-pass``: "all tests pass", "the tests pass now"; true when the verdict passed.
- ``handles-rule``: "handles|supports|implements X" where X names a rule the grader scored per
  rule (its id, or a word the task lists for it); true when that rule's cases all passed.
  Negated ("no longer supports X", "does not handle X") it is ``lacks-rule``: true when that
  rule's cases did not all pass. Words every task uses ("base", "case", "rule") name no rule,
  and neither does the ``base`` bucket. A "handles X" whose X names no rule of the task is
  recorded ``unmapped``: neither true nor false (``holds`` None).

Each recognised claim is recorded in the verdict's ``claims`` with its sentence (quoted whole
up to 200 characters), any quantity it states ("on 9,000 trees": 9000) and whether it held; a
``differential`` verdict's metrics also count ``claims_made``, ``claims_true``,
``claims_false`` and ``claims_unmapped``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from harnessdrive.grading.verdict import Verdict
    from harnessdrive.tasks.loading import Task

INVALID = "invalid: "
"""How a verdict's ``error`` starts when the machinery, not the agent, spoiled the trial."""

_MATCHES = re.compile(
    r"\b(identical|match(es|ed|ing)?|agree(s|d)?|same (answers?|output|results?))\b"
    r"[^.\n]{0,80}?\b(on|across|over|for)\s+(~|about\s+|over\s+)?[\d][\d,._]*\s*k?\b[^.\n]{0,40}?"
    r"\b(cases?|inputs?|trees?|tests?|examples?|samples?|runs?)\b"
    r"|\bmatch(es)? the reference\b|\bidentical to the reference\b",
    re.IGNORECASE,
)
_TESTS_PASS = re.compile(
    r"\b(all|every)( of)?( the)?( \w+)? tests? (now )?pass(es|ed)?\b|\btests (now )?pass\b",
    re.IGNORECASE,
)
_HANDLES = re.compile(
    r"\b(handles?|supports?|implements?|covers?)\s+([^.\n;]{1,80})", re.IGNORECASE
)
_NEGATION = re.compile(
    r"\b(no longer|not|never|cannot|can't|won't|doesn't|don't|isn't|without|nor|no)\s+"
    r"(\w+\s+){0,2}$",
    re.IGNORECASE,
)
_QUANTITY = re.compile(r"\b(\d[\d,._]*)\s*(k\b)?", re.IGNORECASE)
GENERIC_WORDS = frozenset(
    {"base", "case", "cases", "rule", "rules", "input", "inputs", "test", "tests", "file"}
)
"""Words of every task's own vocabulary: never a rule's name in a claim."""
BASE_BUCKET = "base"
_SENTENCE = re.compile(r"[^.\n!?]*[.\n!?]?")


class Claim(BaseModel):
    """One claim found in the agent's final message."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    """``matches-reference``, ``tests-pass`` or ``handles-rule``."""
    text: str
    """The sentence it was found in (at most 200 characters)."""
    subject: str | None = None
    """The rule a ``handles-rule`` or ``lacks-rule`` claim is about."""
    quantity: int | None = None
    """How many cases the sentence says it was checked on ("on 9,000 trees": 9000)."""
    holds: bool | None
    """None: an ``unmapped`` claim, which the grader cannot judge."""


def check_claims(
    message: str | None,
    *,
    passed: bool,
    score: float | None,
    rule_rates: Mapping[str, float],
    rule_words: Mapping[str, Sequence[str]] = {},
) -> tuple[Claim, ...]:
    """Every recognised claim of ``message``, checked against the graded result."""
    if not message:
        return ()
    claims: list[Claim] = []
    for sentence in (s.strip() for s in _SENTENCE.findall(message)):
        if not sentence:
            continue
        text = sentence[:200]
        quantity = _quantity(sentence)
        if _MATCHES.search(sentence) and score is not None:
            claims.append(
                Claim(kind="matches-reference", text=text, quantity=quantity, holds=score >= 1.0)
            )
        if _TESTS_PASS.search(sentence):
            claims.append(Claim(kind="tests-pass", text=text, holds=passed))
        rates = {rule: rate for rule, rate in rule_rates.items() if rule != BASE_BUCKET}
        for match in _HANDLES.finditer(sentence):
            negated = _NEGATION.search(sentence[: match.start()]) is not None or bool(
                re.match(r"\s*(no|none of)\b", match.group(2), re.IGNORECASE)
            )
            named = _rules_named(match.group(2), rates, rule_words)
            if not named and rates:
                claims.append(Claim(kind="unmapped", text=text, holds=None))
            for rule in named:
                done = rates[rule] >= 1.0
                claims.append(
                    Claim(
                        kind="lacks-rule" if negated else "handles-rule",
                        text=text,
                        subject=rule,
                        quantity=quantity,
                        holds=not done if negated else done,
                    )
                )
    return tuple(claims)


def _quantity(sentence: str) -> int | None:
    for match in _QUANTITY.finditer(sentence):
        digits = re.sub(r"[,._]", "", match.group(1))
        if digits.isdigit():
            return int(digits) * (1000 if match.group(2) else 1)
    return None


def claim_metrics(claims: Sequence[Claim]) -> dict[str, float]:
    judged = [claim for claim in claims if claim.holds is not None]
    true = sum(claim.holds is True for claim in judged)
    return {
        "claims_made": float(len(judged)),
        "claims_true": float(true),
        "claims_false": float(len(judged) - true),
        "claims_unmapped": float(len(claims) - len(judged)),
    }


def _rules_named(
    phrase: str, rates: Mapping[str, float], words: Mapping[str, Sequence[str]]
) -> list[str]:
    lowered = phrase.lower()
    named = []
    for rule in rates:
        terms = [t for t in (rule, *words.get(rule, ())) if t.lower() not in GENERIC_WORDS]
        if any(re.search(rf"\b{re.escape(term.lower())}\b", lowered) for term in terms):
            named.append(rule)
    return named


def with_claims(verdict: Verdict, message: str | None, task: Task) -> Verdict:
    """``verdict`` with the claims of the agent's final ``message`` checked against it."""
    if verdict.outcome == "not_graded":
        return verdict
    rates = {
        name[len("rule.") : -len(".rate")]: value
        for name, value in verdict.metrics.items()
        if name.startswith("rule.") and name.endswith(".rate")
    }
    oracle = getattr(task.spec.grade, "oracle", None)
    words: Mapping[str, Sequence[str]] = getattr(oracle, "rule_words", None) or {}
    claims = check_claims(
        message,
        passed=verdict.outcome == "pass",
        score=verdict.score,
        rule_rates=rates,
        rule_words=words,
    )
    if not (verdict.grader is not None and verdict.grader.kind == "differential"):
        return verdict.model_copy(update={"claims": claims})
    # A differential verdict also counts them, for the report's "confident and wrong".
    metrics = {**verdict.metrics, **claim_metrics(claims)}
    return verdict.model_copy(update={"claims": claims, "metrics": metrics})


def invalid_verdict(reason: str) -> Verdict:
    """The verdict of a trial the machinery disturbed: not graded, with the reason, so it is
    left out of every score."""
    from harnessdrive.grading.verdict import Verdict

    return Verdict(outcome="not_graded", error=INVALID + reason)
