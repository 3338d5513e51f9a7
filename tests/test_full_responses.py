"""No answer changes unnoticed: every recorded cassette, searched at a fixed "now",
gives exactly the answer stored in tests/data/golden/ (ids and timings aside).

A change that alters answers on purpose regenerates them with
`python scripts/record_full_responses.py` and shows the difference in its diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from full_responses import KEYS, answers, cassettes, golden_path


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("cassette", cassettes(), ids=lambda path: golden_path(path).stem)
async def test_a_cassette_gives_the_recorded_answers(cassette: Path) -> None:
    expected = json.loads(golden_path(cassette).read_text(encoding="utf-8"))
    got = await answers(cassette)
    assert sorted(got) == sorted(expected)
    for query, answer in expected.items():
        assert got[query] == answer, f"{golden_path(cassette).name}: {query!r} changed"
