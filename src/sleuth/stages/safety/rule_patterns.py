"""The pattern tables both injection screens compile: keyword-gated expressions.

`RulePattern` (an expression and the keywords that let it run), `rule_patterns` (a
table's entries with the `injection_patterns.FRAGMENTS` placeholders filled in),
`check_expressions` (a settings validator naming the first bad expression), `copied`,
`alternation` and `KeywordFinder` (every keyword in a text in one pass). The result
screen (`injection`) and the query screen (`query_injection`) each build their own
settings from these. No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import ahocorasick_rs
from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from sleuth.stages.safety import injection_patterns as tables

__all__ = [
    "KeywordFinder",
    "RulePattern",
    "alternation",
    "check_expressions",
    "copied",
    "rule_patterns",
]

_SURROGATE = re.compile("[\ud800-\udfff]")


class RulePattern(BaseModel):
    """A regular expression of a rule, matched case-insensitively, and its keywords.

    The pattern runs only on a text holding one of its keywords, compared
    case-insensitively: a keyword of ASCII letters, digits and "_" as a whole word ("act"
    is not in "fact"), any other ("<|", "忽略") anywhere. Every match must hold one, or
    the keywords hide it. A plain string is a pattern without keywords: it runs on every
    text.

    >>> RulePattern.model_validate("sudo mode")
    RulePattern(regex='sudo mode', keywords=())
    >>> RulePattern(regex="(?:sudo|root) mode", keywords=("sudo", "root")).keywords
    ('sudo', 'root')
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    regex: str
    keywords: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"regex": value} if isinstance(value, str) else value

    @field_validator("keywords")
    @classmethod
    def _single_words(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for keyword in value:
            if keyword.split() != [keyword]:
                raise ValueError(f"keyword {keyword!r} is not one word without spaces")
        return value


def rule_patterns(entries: Iterable[tuple[str, str]]) -> list[RulePattern]:
    """The (keywords, regex) entries of a pattern table, placeholders filled in
    (`injection_patterns.FRAGMENTS`); `query_injection` reads its own table with it."""

    def filled(regex: str) -> str:
        for placeholder, fragment in tables.FRAGMENTS.items():
            regex = regex.replace(placeholder, fragment)
        return regex

    return [
        RulePattern(regex=filled(regex), keywords=tuple(words.split())) for words, regex in entries
    ]


def copied(table: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    return {language: list(expressions) for language, expressions in table.items()}


def check_expressions(field_name: str, value: Mapping[str, Any]) -> None:
    """Raise `ValueError` naming the first entry of `value` that is not a valid regular
    expression: `value` maps languages to lists, or to rules and then lists."""

    def check(where: str, expressions: Iterable[RulePattern | str]) -> None:
        for index, expression in enumerate(expressions):
            regex = expression.regex if isinstance(expression, RulePattern) else expression
            try:
                re.compile(regex)
            except re.error as error:
                raise ValueError(
                    f"{field_name}.{where}[{index}] is not a valid regular expression: {error}"
                ) from None

    for language, entry in value.items():
        if isinstance(entry, Mapping):
            for rule, expressions in entry.items():
                check(f"{language}.{rule}", expressions)
        else:
            check(language, entry)


def alternation(expressions: Iterable[str]) -> str:
    return "|".join(f"(?:{expression})" for expression in expressions if expression)


class KeywordFinder:
    """Where any of many keywords occur in a text, found in one pass (an Aho-Corasick
    automaton), overlapping ones too: "ignore" inside "ignored" as well as "ignored".

    >>> finder = KeywordFinder(["ignore", "ignored", "忽略"])
    >>> sorted(finder.find("Ignored? 忽略".casefold()))
    [(0, 0, 6), (1, 0, 7), (2, 9, 11)]
    """

    __slots__ = ("_automaton", "keywords")

    def __init__(self, keywords: Sequence[str]) -> None:
        self.keywords = tuple(keywords)
        self._automaton = ahocorasick_rs.AhoCorasick(self.keywords)

    def find(self, text: str) -> set[tuple[int, int, int]]:
        """(keyword's index, start, end) of each occurrence, case as given."""
        try:
            return set(self._automaton.find_matches_as_indexes(text, overlapping=True))
        except UnicodeEncodeError:  # a lone surrogate, in no keyword: one character all the same
            text = _SURROGATE.sub("\ufffd", text)
            return set(self._automaton.find_matches_as_indexes(text, overlapping=True))

    def __reduce__(self) -> tuple[type[KeywordFinder], tuple[tuple[str, ...]]]:
        # the automaton itself cannot be pickled or deep-copied: settings holding one can
        return KeywordFinder, (self.keywords,)
