"""Helpers shared by the provider test modules (imported as `from helpers import ...`).

Each provider test module keeps its own constants and expectations; what is the same
for every provider lives here: reading the bodies under tests/data/<provider>/, the
`parse_response` call with the built-in mapping, the `ProviderQuery` builder, reading a
cassette and catching the error a failed answer raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, TypeVar

import pytest

from sleuth.contract import TimeRange
from sleuth.providers.base import ProviderQuery, RawHit
from sleuth.providers.mapping import FieldMapping

DATA_ROOT = Path(__file__).parent.parent / "data"

E = TypeVar("E", bound=BaseException)


class Parse(Protocol):
    def __call__(
        self, status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping = ...
    ) -> list[RawHit]: ...


class Query(Protocol):
    def __call__(
        self,
        text: str = ...,
        *,
        language: str = ...,
        max_results: int = ...,
        time_range: TimeRange = ...,
        domain_filter: tuple[str, ...] = ...,
    ) -> ProviderQuery: ...


def data_dir(provider: str) -> Path:
    """The folder of hand-written bodies and the cassette of `provider`."""
    return DATA_ROOT / provider


def body_loader(data: Path) -> Callable[[str], Any]:
    """`load(name)`: the JSON body `name` under `data`, freshly parsed on every call."""

    def load(name: str) -> Any:
        return json.loads((data / name).read_text(encoding="utf-8"))

    return load


def parser(provider: ModuleType, mapping: FieldMapping) -> Parse:
    """`parse(status, headers, body[, mapping])`: `provider.parse_response` with `mapping`."""

    def parse(
        status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping = mapping
    ) -> list[RawHit]:
        hits: list[RawHit] = provider.parse_response(status, headers, body, mapping)
        return hits

    return parse


def query_maker(default_text: str, *, original: str | None = None) -> Query:
    """`query(...)`: a `ProviderQuery` for `default_text` unless told otherwise.

    `original` is the search's own wording; by default the query text itself.
    """

    def query(
        text: str = default_text,
        *,
        language: str = "en",
        max_results: int = 5,
        time_range: TimeRange = "any",
        domain_filter: tuple[str, ...] = (),
    ) -> ProviderQuery:
        return ProviderQuery(
            text=text,
            original=text if original is None else original,
            max_results=max_results,
            language=language,
            time_range=time_range,
            domain_filter=domain_filter,
        )

    return query


def cassette_entries(path: Path) -> list[dict[str, Any]]:
    """The exchanges of a JSON-lines cassette, in order."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def raised(
    error: type[E],
    parse: Parse,
    status: int,
    headers: Mapping[str, str],
    body: Any,
    *,
    match: str | None = None,
) -> E:
    """The `error` that parsing a `status` answer raises (fails the test if none is)."""
    with pytest.raises(error, match=match) as caught:
        parse(status, headers, body)
    return caught.value
