"""The guard's fast alternations find exactly what the plain `re` alternation finds, and
its keyword index selects exactly the patterns a keyword-by-keyword test selects: on
every labelled query and on random texts built from their pieces, with case variants
and characters that fold oddly (Kelvin sign, long s, dotted I)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from sleuth.stages.safety import query_injection_features as features
from sleuth.stages.safety.injection_text import fold
from sleuth.stages.safety.query_injection import QueryInjectionSettings
from sleuth.stages.safety.query_injection_alternation import Alternation, KeywordIndex
from sleuth.stages.safety.query_injection_score import DEFAULT

SAFETY = Path(__file__).parents[2] / "data" / "safety"


def labelled_texts() -> list[str]:
    texts = []
    for path in sorted(SAFETY.rglob("*.jsonl")):
        for line in filter(None, path.read_text(encoding="utf-8").split("\n")):
            row = json.loads(line)
            text = row.get("query") or row.get("text")
            if isinstance(text, str):
                texts.append(text)
    return texts


def random_texts(sources: list[str], n: int, seed: int) -> list[str]:
    chance = random.Random(seed)  # noqa: S311 - reproducible test texts, not secrets
    odd = ["K", "ſ", "İ", "ı", "ß", "Σ", "ς", "\u200b", "-", "_", "'", "’", " ", "\n", "。"]
    sample = chance.sample(sources, min(len(sources), 2000))
    words = [word for text in sample for word in text.split()]
    texts = []
    for _ in range(n):
        parts = []
        for _ in range(chance.randint(1, 12)):
            word = chance.choice(words)
            pick = chance.random()
            if pick < 0.2:
                word = word.upper()
            elif pick < 0.3:
                word = "".join(
                    chance.choice([c, *odd]) if chance.random() < 0.2 else c for c in word
                )
            parts.append(word)
        texts.append(chance.choice([" ", "", "  ", ", "]).join(parts))
    return texts


def expression_sets() -> dict[str, list[str]]:
    merged: dict[str, list[str]] = {}
    for by_feature in features.FEATURES.values():
        for feature, entries in by_feature.items():
            merged.setdefault(feature, []).extend(entry for entry in entries if entry)
    topic = QueryInjectionSettings().topic_cues
    acts = DEFAULT.any_act
    return {
        "acts": acts.expressions if acts is not None else [],
        "topic_cues": [entry for entries in topic.values() for entry in entries if entry],
        **merged,
    }


TEXTS = labelled_texts()
SETS = expression_sets()


def test_the_labelled_sets_are_there() -> None:
    assert len(TEXTS) > 1000 and SETS["acts"] and SETS["topic_cues"]


@pytest.mark.parametrize("name", sorted(SETS))
def test_matches_exactly_what_the_plain_alternation_matches(name: str) -> None:
    fast = Alternation(SETS[name], re.I)
    plain = re.compile("|".join(f"(?:{e})" for e in SETS[name]), re.I)
    for text in [*TEXTS, *random_texts(TEXTS, 1500, seed=len(name))]:
        spans = [m.span() for m in plain.finditer(text)]
        assert [m.span() for m in fast.finditer(text)] == spans, text
        found = fast.search(text)
        assert (found.span() if found else None) == (spans[0] if spans else None), text
        middle = len(text) // 3, 2 * len(text) // 3  # a clause's offsets, as the score asks
        inside = plain.search(text, *middle)
        got = fast.search(text, *middle)
        assert (got.span() if got else None) == (inside.span() if inside else None), text


def test_the_acts_and_topics_take_the_fast_way() -> None:
    assert Alternation(SETS["acts"], re.I).fast and Alternation(SETS["topic_cues"], re.I).fast


@pytest.mark.parametrize(
    ("expressions", "text", "found"),
    [
        ([r"\bignore\b", "忽略"], "please ignore 忽略", (7, 13)),
        ([r"\bignore\b"], "ignored", None),
        ([r"(?:set|put)\s+aside", r"\bput\b"], "to put aside", (3, 12)),  # the first wins
        ([r"(?i:k)elvin"], "\u212aelvin", (0, 6)),  # a scoped flag folds the Kelvin sign
        ([r"x?y", "ab"], "zzy ab", (2, 3)),  # an optional start: the plain way
        ([r".bc", "abc"], "abc", (0, 3)),
    ],
)
def test_leftmost_then_first_alternative(
    expressions: list[str], text: str, found: tuple[int, int] | None
) -> None:
    match = Alternation(expressions).search(text)
    assert (match.span() if match else None) == found
    plain = re.compile("|".join(f"(?:{e})" for e in expressions)).search(text)
    assert (plain.span() if plain else None) == found


def test_the_keyword_index_selects_the_patterns_a_plain_keyword_test_selects() -> None:
    compiled = QueryInjectionSettings().compiled
    keyword_sets = [pattern.keywords for pattern in compiled.patterns]
    keyword_sets += [(), ("",), ("梗",), ("x",)]  # none, an empty one, one character
    index = KeywordIndex(keyword_sets)
    for text in [*TEXTS, *random_texts(TEXTS, 1500, seed=3), "", "x", "梗"]:
        folded = fold(text)
        expected = [
            i
            for i, keywords in enumerate(keyword_sets)
            if not keywords or any(keyword in folded for keyword in keywords)
        ]
        assert index.selected(folded) == expected, text
