"""Helpers for testing agents (and sleuth itself) against sleuth, with no network.

- `fake_provider(name, ...)`: a provider whose body is `{"results": [{url, title,
  snippet, published_at}]}` (`FAKE_MAPPING`), with the capabilities you declare.
- `registered(provider)`: register a provider for the duration of a `with` block.
- `Cassette`: build recorded exchanges in code, write them as a JSON Lines cassette
  or replay them directly.
- `memory_settings(...)`: settings whose breakers, quotas and cache live in memory,
  so tests share nothing through the user's data folder.
- `run_in_virtual_time(main)`: run a coroutine on an event loop whose clock jumps to
  the next timer, so deadlines, hedges and backoffs are exact and nothing sleeps.

>>> body = {"results": [{"url": "https://a.example/", "title": "A"}]}
>>> cassette = Cassette().add("fake", "q", body=body)
>>> with registered(fake_provider("fake")):
...     settings = memory_settings(chain=["fake"], providers={"fake": {}})
...     Sleuth(settings, cassette.transport()).search_sync("q").results[0].title
'A'
"""

from __future__ import annotations

import asyncio
import json
import selectors
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from sleuth import providers
from sleuth.config import Settings
from sleuth.gateway import Sleuth
from sleuth.providers.base import (
    HttpRequest,
    Provider,
    ProviderInfo,
    ProviderQuery,
    ProviderSettings,
    QueryStyle,
    RawHit,
    check_status,
    expect_object,
)
from sleuth.providers.mapping import FieldMapping, apply
from sleuth.transport import ReplayTransport

__all__ = [
    "Cassette",
    "Settings",
    "Sleuth",
    "VirtualTimeLoop",
    "fake_provider",
    "memory_settings",
    "registered",
    "run_in_virtual_time",
]

R = TypeVar("R")


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock jumps to the next timer instead of waiting for it.

    >>> async def nap() -> float:
    ...     await asyncio.sleep(3600)
    ...     return asyncio.get_running_loop().time()
    >>> run_in_virtual_time(nap)
    3600.0
    """

    def __init__(self) -> None:
        self.now = 0.0
        selector = selectors.DefaultSelector()
        select = selector.select

        def jump(timeout: float | None = None) -> list[Any]:
            events = select(0)
            if not events and timeout != 0:
                if timeout is None:
                    raise RuntimeError("deadlock: nothing is scheduled and nothing can happen")
                self.now += timeout
            return events

        selector.select = jump  # type: ignore[method-assign]
        super().__init__(selector)

    def time(self) -> float:
        return self.now


def run_in_virtual_time(main: Callable[[], Coroutine[Any, Any, R]]) -> R:
    """`main()` run to completion on a fresh `VirtualTimeLoop`."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(main())


def memory_settings(**values: Any) -> Settings:
    """`Settings(**values)` with the store in memory (unless `values` names one)."""
    values.setdefault("store", {"backend": "memory"})
    return Settings(**values)


FAKE_MAPPING = FieldMapping(
    results="results",
    fields={
        "url": ["url"],
        "title": ["title"],
        "snippet": ["snippet"],
        "published_at": ["published_at"],
    },
)


def fake_provider(
    name: str,
    *,
    time_range: bool = False,
    domain_filter: bool = False,
    query_style: QueryStyle = "keywords",
) -> Provider:
    """A provider for tests: body `{"results": [...]}`, capabilities as declared."""
    info = ProviderInfo(
        name=name,
        docs_url="https://example.invalid/fake",
        time_range=time_range,
        domain_filter=domain_filter,
        query_style=query_style,
    )

    def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
        return HttpRequest(
            "GET", settings.base_url or f"https://{name}.invalid/search", {"q": query.text}
        )

    def parse_response(
        status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
    ) -> list[RawHit]:
        check_status(name, status, headers, body)
        return apply(mapping, expect_object(name, body))

    return Provider(info, build_request, parse_response, default_mapping=FAKE_MAPPING)


@contextmanager
def registered(*added: Provider) -> Iterator[None]:
    """Register providers for the duration of the block, then remove them."""
    for provider in added:
        providers.register(provider)
    try:
        yield
    finally:
        for provider in added:
            providers.unregister(provider.name)


@dataclass
class Cassette:
    """Recorded exchanges built in code, in the cassette format `--replay` reads."""

    entries: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self,
        provider: str,
        query: str,
        *,
        status: int = 200,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Cassette:
        self.entries.append(
            {
                "provider": provider,
                "query": query,
                "status": status,
                "headers": dict(headers or {"content-type": "application/json"}),
                "body": body,
            }
        )
        return self

    def write(self, path: Path) -> Path:
        lines = (json.dumps(entry, ensure_ascii=False) for entry in self.entries)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    def transport(self) -> ReplayTransport:
        return ReplayTransport(self.entries, source="Cassette")
