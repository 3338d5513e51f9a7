r"""Declarative field mapping: where each unified field lives in a provider's body.

A mapping file (`providers/mappings/<name>.yaml`) names the path of the result list
and, for each unified field, the ordered aliases to try; the first present,
non-empty value wins. A back end that renames a field is fixed by adding the new
name to the YAML, not by changing code.

    results: web.results
    fields:
      url: [url]
      title: [title]
      snippet: [description, "extra_snippets[0]"]
      published_at: [page_age]
    extras:
      hostname: [meta_url.hostname]
      price: [price, zkPrice, minGroupPrice]

Paths are dot-separated keys with optional `[n]` indexes; a key may contain `:`
(`pagemap.metatags[0].og:description`), and a dot written `\.` (`metatags[0].dc\.date`
is the meta tag `dc.date`). Pure: the files are read by
`sleuth.mapping_files`, which hands the parsed `FieldMapping` in.

>>> mapping = FieldMapping(results="items", fields={"title": ["name", "title"]})
>>> [hit.title for hit in apply(mapping, {"items": [{"title": "A"}, {"name": "B"}]})]
['A', 'B']
>>> lookup({"a": [{"b:c": 1}]}, "a[0].b:c")
1
>>> lookup({"meta": {"dc.date": "2025-03-03"}}, r"meta.dc\.date")
'2025-03-03'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property, lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sleuth.errors import BadResponse
from sleuth.providers.body import RawHit, check_status, expect_object

UnifiedField = Literal["url", "title", "snippet", "published_at"]
_UNIFIED: tuple[UnifiedField, ...] = ("url", "title", "snippet", "published_at")

_SEGMENT = re.compile(r"([^.\[\]]+)((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")
# A dot that separates keys: one not escaped as `\.`.
_DOT = re.compile(r"(?<!\\)\.")


class PathError(ValueError):
    """A mapping path that cannot be parsed."""


#: A parsed path: keys and list indexes.
Path = tuple[str | int, ...]
#: Each field's aliases as parsed paths, in the order they are tried.
Paths = tuple[tuple[str, tuple[Path, ...]], ...]


@lru_cache(maxsize=1024)
def parse_path(path: str) -> Path:
    """`"a.b[0].c"` → `("a", "b", 0, "c")`; raises `PathError` on a malformed path."""
    steps: list[str | int] = []
    for part in _DOT.split(path):
        match = _SEGMENT.fullmatch(part.replace(r"\.", "\0"))
        if not match:
            raise PathError(f"malformed path {path!r} at {part!r}")
        steps.append(match.group(1).replace("\0", "."))
        steps.extend(int(index) for index in _INDEX.findall(match.group(2)))
    return tuple(steps)


def lookup(record: Any, path: str) -> Any:
    """The value at `path`, or None when any step is missing."""
    return _walk(record, parse_path(path))


def _walk(record: Any, steps: Path) -> Any:
    value = record
    for step in steps:
        if type(step) is int:
            if not isinstance(value, list) or step >= len(value):
                return None
            value = value[step]
        # JSON bodies are dicts: the exact type is checked before the (slower) ABC.
        elif type(value) is dict or isinstance(value, Mapping):
            value = value.get(step)
        else:
            return None
    return value


def first_present(record: Any, aliases: Sequence[str]) -> Any:
    """The first alias whose value is present and not empty."""
    return _first_present(record, tuple(map(parse_path, aliases)))


def _first_present(record: Any, aliases: Sequence[Path]) -> Any:
    for steps in aliases:
        value = _walk(record, steps)
        if _present(value):
            return value
    return None


def _present(value: Any) -> bool:
    """Whether a looked-up value counts as given: not missing, not empty."""
    return value is not None and value != "" and value != [] and value != {}


class FieldMapping(BaseModel):
    """One provider's mapping file, validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    results: str = Field(
        description="Path of the result list in the body ('' for the body itself)."
    )
    results_may_be_absent: bool = Field(
        False, description="True for APIs that omit the list when nothing was found."
    )
    fields: dict[UnifiedField, list[str]] = Field(description="Ordered aliases per field.")
    extras: dict[str, list[str]] = Field(
        default_factory=dict, description="Stable provider-specific extras, into ResultItem.fields."
    )

    @field_validator("results")
    @classmethod
    def _results_path(cls, value: str) -> str:
        if value:
            parse_path(value)
        return value

    @field_validator("fields", "extras")
    @classmethod
    def _alias_paths(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for name, aliases in value.items():
            if not aliases:
                raise ValueError(f"{name}: give at least one alias")
            for alias in aliases:
                parse_path(alias)
        return value

    @property
    def paths(self) -> tuple[Paths, Paths]:
        """The unified fields' aliases (url, title, snippet, published_at: the order
        `fell_back` lists them in) and the extras', parsed once: every record of every
        answer walks them."""
        fields, extras, parsed = self._parsed
        if fields is self.fields and extras is self.extras:
            return parsed
        # A copy made with other fields (`model_copy(update=...)`) inherits the
        # parsed paths of the original: parse its own.
        return _parse_paths(self)

    @cached_property
    def _parsed(self) -> tuple[object, object, tuple[Paths, Paths]]:
        return self.fields, self.extras, _parse_paths(self)


def _parse_paths(mapping: FieldMapping) -> tuple[Paths, Paths]:
    fields = tuple(
        (name, tuple(parse_path(alias) for alias in mapping.fields[name]))
        for name in _UNIFIED
        if name in mapping.fields
    )
    extras = tuple(
        (name, tuple(parse_path(alias) for alias in aliases))
        for name, aliases in mapping.extras.items()
    )
    return fields, extras


def records(mapping: FieldMapping, body: Any) -> list[Any] | None:
    """The result list the mapping points at; None when the body has another shape."""
    found = lookup(body, mapping.results) if mapping.results else body
    if found is None and mapping.results_may_be_absent:
        return []
    return found if isinstance(found, list) else None


def hit_from(mapping: FieldMapping, record: Any) -> RawHit:
    """One record as a `RawHit`; text fields that are not strings count as missing.

    A field answered by a later alias than its first is listed in `fell_back`, so
    the item can say it is degraded (its primary field was missing).
    """
    fields, extra_paths = mapping.paths
    plain = type(record) is dict
    found: dict[str, str] = {}
    fell_back: list[str] = []
    for name, aliases in fields:
        for position, steps in enumerate(aliases):
            # A one-key path into a JSON object, the common case, needs no walk.
            value = record.get(steps[0]) if plain and len(steps) == 1 else _walk(record, steps)
            if isinstance(value, str) and (value := value.strip()):
                if position > 0:
                    fell_back.append(name)
                found[name] = value
                break
    extras = {}
    for name, aliases in extra_paths:
        if plain and len(aliases) == 1 and len(aliases[0]) == 1:
            # One one-key alias, the common case: `_first_present` without the walk.
            value = record.get(aliases[0][0])
        else:
            value = _first_present(record, aliases)
        if _present(value):
            extras[name] = value
    return RawHit(
        url=found.get("url"),
        title=found.get("title"),
        snippet=found.get("snippet"),
        published_at=found.get("published_at"),
        fields=extras,
        fell_back=tuple(fell_back),
    )


def apply(mapping: FieldMapping, body: Any) -> list[RawHit]:
    """Every record of the body as a `RawHit`; non-object records are skipped."""
    found = records(mapping, body) or []
    return [hit_from(mapping, record) for record in found if isinstance(record, Mapping)]


def json_records(
    provider: str,
    status: int,
    headers: Mapping[str, str],
    body: Any,
    mapping: FieldMapping,
    detail: Callable[[Mapping[str, Any]], str] = lambda payload: "",
) -> tuple[Mapping[str, Any], list[Mapping[str, Any]]]:
    """The common start of `parse_response`: the body (a JSON object) and the object
    records of its result list.

    A non-2xx status raises the contract error (`check_status`), a body that is not a
    JSON object or has no list at `mapping.results` a `BadResponse`, with `detail(body)`
    appended to its message. Each provider keeps its own checks before and after.
    """
    check_status(provider, status, headers, body)
    payload = expect_object(provider, body)
    found = records(mapping, payload)
    if found is None:
        raise BadResponse(
            f"{provider} answered JSON whose `{mapping.results}` is not a list{detail(payload)}",
            provider=provider,
            http_status=status,
        )
    return payload, [record for record in found if isinstance(record, Mapping)]
