"""Prompts too weak to grade fairly, and what hidden tests pin that a prompt does not state."""

from __future__ import annotations

import pytest

from harnessdrive.mining.prompt_quality import assess, prompt_problems, unstated_pins


@pytest.mark.parametrize(
    ("subject", "body", "lines", "problem"),
    [
        ("fix", "", 3, "empty prompt"),
        ("Signed-off-by: Someone <s@example.com>", "", 3, "trailers only"),
        ("Merge commit from fork", "", 12, "merge boilerplate"),
        ("Merge pull request #12 from someone/branch", "Fix parsing", 12, "merge boilerplate"),
        (
            "Refactor the decoder (#80)",
            "* split modules\n* rename helpers\n* tidy\n* more",
            447,
            "a list of 4 bullets over a 447-line change",
        ),
        (
            "Port the parser",
            "See https://chatgpt.com/share/abc123 for the plan",
            20,
            "links to a chat session the agent cannot open",
        ),
        ("Fixes https://github.com/o/r/issues/9", "", 20, "mostly a link the agent cannot open"),
        ("Rework the scheduler", "", 300, "3 words for a 300-line change"),
    ],
)
def test_each_class_of_weak_prompt_is_named(
    subject: str, body: str, lines: int, problem: str
) -> None:
    assert problem in prompt_problems(subject, body, lines)


def test_a_plain_request_has_no_problem() -> None:
    subject = "Fix maximum to return the largest value"
    body = "maximum returned the first value; it now returns the largest one."
    assert prompt_problems(subject, body, 4) == []
    assert not assess(subject, body, 4, b"", b"").weak


TEST_PATCH = b"""\
--- a/tests/test_jwt.py
+++ b/tests/test_jwt.py
@@ -1,0 +2,9 @@
+def test_bad_key():
+    with pytest.raises(InvalidKeyError, match="Expected an RSA key, got bytes"):
+        decode(token, b"k")
+    assert api._check_key(b"k") is False
+    assert decode(token, key).leeway == 30
+    self.assertRaises(ValueError, f)
"""
GOLD_PATCH = b"""\
--- a/jwt/api.py
+++ b/jwt/api.py
@@ -1,2 +1,3 @@
-def decode(token, key):
+def decode(token, key, leeway=30):
+    _check_key(key)
"""


def test_what_the_tests_pin_and_the_prompt_does_not_say_is_noted() -> None:
    pins = unstated_pins("Reject keys of the wrong type", TEST_PATCH, GOLD_PATCH)
    assert pins == [
        "exception type InvalidKeyError",
        "exception type ValueError",
        "message 'Expected an RSA key, got bytes'",
        "private name _check_key",
        "default leeway=30",
    ]
    quality = assess("Reject keys of the wrong type", "", 3, TEST_PATCH, GOLD_PATCH)
    assert quality.weak  # an exact message no correct fix could guess
    said = "Raise InvalidKeyError('Expected an RSA key, got bytes') from _check_key; leeway 30"
    assert unstated_pins(said, TEST_PATCH, GOLD_PATCH) == ["exception type ValueError"]
