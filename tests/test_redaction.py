from __future__ import annotations

import pytest

from sleuth.redaction import REDACTED, redact, redact_text


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
