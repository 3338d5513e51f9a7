from __future__ import annotations

import random

import pytest

from sleuth.redaction import _ANY_PATTERN, REDACTED, _may_match, redact, redact_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: BEARER abcdef123456", f"Authorization: BEARER {REDACTED}"),
        ("key sk_live_0123456789abcdefXYZ here", f"key {REDACTED} here"),
        ("AIzaSyA1234567890123456789012", REDACTED),
        ("tvly-abcdefgh1", REDACTED),
        ("ghp_0123456789abcdefABCD", REDACTED),
        ("AKIAABCDEFGHIJKLMNOP", REDACTED),
        ("xoxb-1234567890-abc", REDACTED),
        (
            "https://api.example/s?q=x&API_KEY=abc123",
            f"https://api.example/s?q=x&API_KEY={REDACTED}",
        ),
        ('{"Client_Secret": "s3cr3tvalue"}', f'{{"Client_Secret": "{REDACTED}"}}'),
    ],
)
def test_every_kind_of_key_is_redacted_whatever_its_case(text: str, expected: str) -> None:
    assert redact_text(text, ()) == expected


@pytest.mark.parametrize(
    "text",
    [
        "srch_5f2b7451e3864e529b2c771051e177eb",
        "2026-12-01T23:06:38.577+00:00",
        "a token of thanks",  # the scheme word with nothing key-like after it
        "sk_short",  # sleuth's shown key prefix stays readable
        "",
    ],
)
def test_text_with_nothing_secret_is_left_as_it_is(text: str) -> None:
    assert redact_text(text, ()) == text


def test_a_secret_value_is_redacted_before_a_shorter_one_it_contains() -> None:
    secrets = frozenset({"abcdefgh", "abcdefgh-longer"})
    assert redact_text("x abcdefgh-longer y abcdefgh", secrets) == f"x {REDACTED} y {REDACTED}"
    assert redact_text("x abcdefgh-longer", ["abcdefgh", "abcdefgh-longer"]) == f"x {REDACTED}"


class _Text(str):
    pass


def test_an_event_keeps_its_numbers_and_redacts_every_string_in_it() -> None:
    event = {
        "n": 3,
        "ratio": 0.5,
        "ok": True,
        "none": None,
        "headers": {"Authorization": "Bearer x"},
        "errors": [{"message": "GET ?key=abc123 failed"}],
        "subclass": _Text("token abcdefgh12345"),
        "pair": ("sk_live_0123456789abcdefXYZ", 1),
    }
    assert redact(event, ()) == {
        "n": 3,
        "ratio": 0.5,
        "ok": True,
        "none": None,
        "headers": {"Authorization": REDACTED},
        "errors": [{"message": f"GET ?key={REDACTED} failed"}],
        "subclass": f"token {REDACTED}",
        "pair": [REDACTED, 1],
    }


def _shuffled_case(text: str, rng: random.Random) -> str:
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)


def test_the_literal_check_never_skips_text_a_pattern_would_match() -> None:
    """`redact_text` skips the patterns when `_may_match` is False: every text one of
    them matches, in any case, must be one it lets through."""
    rng = random.Random(17)  # noqa: S311 - a repeatable corpus, not a secret
    pieces = [
        "bearer ", "Basic\t", "token ", "sk_", "sk-", "AIza", "tvly-", "ghp_", "gho_",
        "github_pat_", "AKIA", "xoxb-", "?key=", "&api-key=", ";access_token=", "?auth=",
        "x-api-key: ", "client_secret=", "password:", "passwd=", '"apikey": "', "abcdefgh",
        "0123456789ABCDEF", "Z9_-", " ", ".", "srch_", "2026-12-01T23:06:38",
    ]  # fmt: skip
    matched = 0
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        for candidate in (text, _shuffled_case(text, rng)):
            if _ANY_PATTERN.search(candidate) is not None:
                matched += 1
                assert _may_match(candidate), candidate
    assert matched > 1000  # the corpus does reach the patterns
    # Outside ASCII, (?i) folds letters str.lower does not: the pattern decides there.
    assert _may_match("baſic abcdefgh1234")
    assert redact_text("baſic abcdefgh1234", ()) == f"baſic {REDACTED}"
    assert not _may_match("srch_5f2b7451e3864e529b2c771051e177eb")
