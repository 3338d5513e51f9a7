"""How many of a provider's hits reach the answer: replayed real-shaped bodies through
the whole pipeline, asking for more than `per_provider_results`."""

import json
from pathlib import Path
from typing import Any

import pytest

from sleuth.config import Settings
from sleuth.gateway import Sleuth
from sleuth.stages.results.dedupe import DedupeSettings, canonical_url
from sleuth.testing import Cassette

DATA = Path(__file__).parent / "data"


def body(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def brave_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "test-key")


def served(provider: str) -> Settings:
    return Settings(
        chain=[provider],
        providers={provider: {"enabled": True, "base_url": "http://127.0.0.1:9"}},
        store={"backend": "memory"},
        projection={"optional": ["url"]},
    )


async def search(provider: str, name: str, max_results: int) -> Any:
    cassette = Cassette().add(provider, "python asyncio", body=body(name))
    async with Sleuth(served(provider), cassette.transport()) as sleuth:
        return await sleuth.search(
            {"query": "python asyncio", "max_results": max_results, "include": ["url"]}
        )


async def test_twenty_asked_of_a_21_result_brave_body_gives_twenty() -> None:
    sent = body("brave/search_21.json")["web"]["results"]
    response = await search("brave", "brave/search_21.json", 20)
    assert response.providers["brave"].results == 21
    assert len(response.results) == 20
    assert {item.url for item in response.results} <= {hit["url"] for hit in sent}
    assert response.degradations == []


async def test_five_asked_still_gives_five() -> None:
    response = await search("brave", "brave/search_21.json", 5)
    assert len(response.results) == 5


async def test_searxng_hits_for_nine_pages_answer_nine_pages() -> None:
    """15 hits, of which the first ten cover only five pages (http, tracking parameters
    and fragments repeat a page): all nine pages come back to a request for 20."""
    sent = body("searxng/search_15_hits_9_pages.json")["results"]
    pages = {canonical_url(hit["url"], DedupeSettings()) for hit in sent}
    assert len(sent) == 15
    assert len(pages) == 9
    response = await search("searxng", "searxng/search_15_hits_9_pages.json", 20)
    answered = {canonical_url(item.url, DedupeSettings()) for item in response.results}
    assert answered == pages
    assert len(response.results) == 9
