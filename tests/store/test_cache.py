"""The response cache's policy: which requests share an answer, how long an answer
stays fresh, what an entry holds, and pruning from cron while the service runs.

The stores' cache semantics (hits, stale reads, partial vs complete) are in the
shared contract suite, `test_store_contract.py`.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import yaml

from sleuth.contract import (
    Citation,
    ProjectedItem,
    SearchRequest,
    SearchResponse,
    SummarySentence,
)
from sleuth.store import CacheEntry, CacheSettings, SqliteStore, StoreSettings, cache_key, entry_for
from sleuth.store.base import CacheTtl

DAY = 86400.0
T0 = 1_750_000_000.0


def key(**fields: object) -> str:
    return cache_key(SearchRequest.model_validate({"query": "python release", **fields}))


def test_requests_that_differ_only_in_spelling_share_an_answer() -> None:
    assert key(query="  Python\u3000 RELEASE ") == key(query="python release")
    assert key(domain_filter=["b.org", "a.org", "a.org"]) == key(domain_filter=["a.org", "b.org"])
    assert key(include=["url", "published_at"]) == key(include=["published_at", "url"])
    assert key(providers=["brave", "local"]) == key(providers=["local", "brave"])
    # how sleuth answers is not what it answers
    assert key(priority="high", no_cache=True) == key()


@pytest.mark.parametrize(
    "change",
    [
        {"query": "python releases"},
        {"time_range": "past_week"},
        {"domain_filter": ["python.org"]},
        {"providers": ["brave"]},
        {"include": ["url"]},
        {"max_results": 6},
        {"context": ["we were talking about Rust"]},
    ],
)
def test_each_answer_shaping_field_gets_its_own_answer(change: dict[str, object]) -> None:
    assert key(**change) != key()


def test_a_request_naming_no_providers_is_keyed_by_the_configured_chain() -> None:
    request = SearchRequest(query="北京今天天气怎么样")

    assert cache_key(request, chain=["local", "brave"]) != cache_key(request, chain=["local"])
    assert cache_key(request, chain=["local"]) == key(
        query="北京今天天气怎么样", providers=["local"]
    )


def test_a_narrower_time_range_goes_stale_sooner() -> None:
    settings = CacheSettings()
    ttls = {
        time_range: settings.ttl_for(time_range, complete=True)
        for time_range in ("any", "past_year", "past_month", "past_week")
    }

    assert ttls == {"any": 86400, "past_year": 43200, "past_month": 21600, "past_week": 3600}
    assert settings.ttl_for("any", complete=False) == 300  # a partial answer: 5 minutes
    short = CacheSettings(ttl_s=CacheTtl(past_week=60))
    assert short.ttl_for("past_week", complete=False) == 60  # never longer than its range's


def test_configuring_one_lifetime_keeps_the_others() -> None:
    section = yaml.safe_load("ttl_s:\n  past_week: 600\n")  # `cache:` in sleuth.yaml
    cache = CacheSettings.model_validate(section)

    assert (cache.ttl_s.past_week, cache.ttl_s.any) == (600, 86400)


def response_for(request: SearchRequest) -> SearchResponse:
    return SearchResponse(
        task_id="srch_1",
        query=request.query,
        rewritten_query="python 3.13 release",
        results=[
            ProjectedItem(
                title="Python 3.13.0", snippet="Released 7 Oct 2024.", url="https://python.org/3.13"
            ),
            ProjectedItem(
                title="What's new",
                snippet="Free-threaded build.",
                sources=["https://docs.python.org/3.13/whatsnew"],
            ),
        ],
        summary=[
            SummarySentence(
                text="Python 3.13 came out on 7 October 2024.",
                citations=[Citation(result=0, start=0, end=20)],
            )
        ],
    )


def test_an_entry_holds_the_summary_the_sources_and_the_whole_response() -> None:
    request = SearchRequest(
        query="When was Python 3.13 released?", time_range="past_year", include=["url"]
    )
    response = response_for(request)

    entry = entry_for(request, response, complete=True, now=T0, settings=CacheSettings())

    assert entry.query_hash == cache_key(request)
    assert entry.query == "When was Python 3.13 released?"
    assert entry.result_summary == "Python 3.13 came out on 7 October 2024."
    assert entry.source_urls == ("https://python.org/3.13", "https://docs.python.org/3.13/whatsnew")
    assert SearchResponse.model_validate(entry.response) == response
    assert (entry.created_at, entry.expires_at) == (T0, T0 + 12 * 3600)


def test_a_partial_entry_without_a_summary_lists_titles_and_lives_briefly() -> None:
    request = SearchRequest(query="python release")
    response = response_for(request).model_copy(update={"summary": []})

    entry = entry_for(request, response, complete=False, now=T0, settings=CacheSettings())

    assert entry.result_summary == "Python 3.13.0; What's new"
    assert not entry.complete and entry.expires_at == T0 + 300


def test_the_store_file_defaults_to_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert StoreSettings().path == tmp_path / "sleuth" / "state.sqlite"


def cached(name: str, at: float) -> CacheEntry:
    return CacheEntry(
        query_hash=name,
        query=name,
        result_summary="summary",
        source_urls=("https://example.org/",),
        response={"query": name},
        complete=True,
        created_at=at,
        updated_at=at,
        expires_at=at + DAY,
    )


async def test_prune_from_cron_runs_while_the_service_reads_and_writes(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    service = SqliteStore(path)
    cron = SqliteStore(path, prune_batch=20)  # another process's connection
    now = T0 + 40 * DAY
    for start in range(0, 3000, 500):
        await asyncio.gather(
            *(service.put_cached(cached(f"old{i}", T0)) for i in range(start, start + 500))
        )
    await asyncio.gather(*(service.put_cached(cached(f"hot{i}", T0)) for i in range(10)))
    for _ in range(3):
        await asyncio.gather(*(service.get_cached(f"hot{i}", now) for i in range(10)))

    served_at: list[float] = []

    async def serve() -> None:
        for i in range(300):
            await service.put_cached(cached(f"new{i}", now))
            assert await service.get_cached(f"hot{i % 10}", now) is not None
            served_at.append(time.perf_counter())

    async def prune() -> tuple[int, float, float]:
        started = time.perf_counter()
        removed = await cron.prune_cache(now, min_hits=3, older_than_days=30)
        return removed, started, time.perf_counter()

    try:
        (removed, started, ended), _ = await asyncio.gather(prune(), serve())
        assert removed == 3000
        assert any(started < t < ended for t in served_at), "the service waited for the prune"
        for i in range(300):
            assert await cron.get_cached(f"new{i}", now) is not None
        assert await cron.get_cached("old0", now) is None
        hot = await cron.get_cached("hot0", now)
        assert hot is not None and hot.entry.hit_count >= 4
    finally:
        await service.aclose()
        await cron.aclose()
