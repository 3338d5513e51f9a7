"""Real-shaped provider bodies replayed through the whole pipeline: what a user sees
of a byte order mark, a date the body gives and an answer it carries."""

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from sleuth.config import Settings
from sleuth.contract import SearchResponse
from sleuth.gateway import Sleuth
from sleuth.testing import Cassette

DATA = Path(__file__).parent / "data"
EVERYTHING = ["url", "published_at", "freshness", "dated_from", "fields", "providers"]


def body(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BRAVE", "GOOGLE", "SERPAPI", "TAVILY", "EXA"):
        monkeypatch.setenv(f"{name}_API_KEY", "test-key")


async def replay(provider: str, query: str, answer: Any, **request: Any) -> SearchResponse:
    served = Settings(
        chain=[provider],
        providers={
            provider: {
                "enabled": True,
                "base_url": "http://127.0.0.1:9",
                "options": {"cx": "test-cx"} if provider == "google" else {},
            }
        },
        store={"backend": "memory"},
        projection={"optional": EVERYTHING},
    )
    cassette = Cassette().add(provider, query, body=answer)
    async with Sleuth(served, cassette.transport()) as sleuth:
        return await sleuth.search(
            {"query": query, "max_results": 10, "include": EVERYTHING, **request}
        )


async def test_a_byte_order_mark_in_a_google_snippet_does_not_reach_the_agent() -> None:
    answer = body("google/search_ok.json")
    answer = copy.deepcopy(answer)
    first = answer["items"][0]
    first["snippet"] = "\ufeff" + first["snippet"]
    first["title"] = first["title"] + "\ufeff"

    response = await replay("google", "what's new in python 3.13", answer)

    texts = [text for item in response.results for text in (item.title, item.snippet)]
    assert texts
    assert not any("\ufeff" in text for text in texts)
    assert any(item.snippet.startswith("This article explains") for item in response.results)


async def test_google_publication_meta_tags_date_the_results() -> None:
    response = await replay(
        "google", "what's new in python 3.13", body("google/search_metatags.json")
    )

    dated = {item.url: item.published_at for item in response.results}
    assert dated["https://realpython.com/python313-new-features/"] is not None
    assert dated["https://realpython.com/python313-new-features/"].date().isoformat() == (
        "2024-10-02"
    )
    assert dated["https://news.example.com/python-313-free-threading"] is not None
    # og:updated_time alone: no publication date
    assert dated["https://docs.python.org/3/whatsnew/3.13.html"] is None


async def test_serpapi_knowledge_graph_and_top_story_reach_the_agent() -> None:
    response = await replay(
        "serpapi", "python programming language", body("serpapi/search_knowledge_graph.json")
    )

    by_url = {item.url: item for item in response.results}
    graph = by_url["https://en.wikipedia.org/wiki/Python_(programming_language)"]
    assert graph.fields is not None
    assert graph.fields["attributes"]["developer"] == "Python Software Foundation"
    assert graph.snippet.startswith("Python is a high-level")
    organic = by_url["https://www.python.org/downloads/release/python-3130/"]
    assert organic.published_at is not None
    assert organic.published_at.date().isoformat() == "2024-10-07"


async def test_brave_infobox_faq_and_news_reach_the_agent() -> None:
    response = await replay("brave", "python", body("brave/search_sections.json"))

    sections = {item.fields.get("section") for item in response.results if item.fields}
    assert {"infobox", "faq", "news"} <= sections
    panel = next(i for i in response.results if i.fields and i.fields.get("section") == "infobox")
    assert panel.fields is not None
    assert panel.fields["attributes"]["Developer"] == "Python Software Foundation"
