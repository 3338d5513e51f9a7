"""The last steps down the ladder: a fresh cached answer first, a stale one when no
provider answered, else the structured fallback answer; what is cached, and for how long.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from sleuth.config import Settings
from sleuth.contract import (
    Degradation,
    ErrorInfo,
    ProjectedItem,
    ProviderReport,
    SearchRequest,
    SearchResponse,
    SummarySentence,
)
from sleuth.errors import ProviderUnavailable
from sleuth.gateway import Sleuth
from sleuth.resilience.ladder import (
    LadderSettings,
    complete,
    from_cache,
    nothing_answered,
    rescue,
)
from sleuth.store import CacheEntry, MemoryStore, cache_key
from sleuth.testing import Cassette, fake_provider, registered

NOW = 1_750_000_000.0
ENGLISH = "No information could be retrieved right now; try other wording or try again later."
ANSWER = {"results": [{"url": "https://a.example/", "title": "Solar", "snippet": "It works."}]}


def report(status: str) -> ProviderReport:
    return ProviderReport(status=status, latency_ms=5.0, results=0)  # type: ignore[arg-type]


def down(*statuses: str) -> SearchResponse:
    """This search's own response when no provider answered."""
    errors = [ProviderUnavailable("alpha answered HTTP 503", provider="alpha").info()]
    return SearchResponse(
        task_id="srch_now",
        query="solar panels",
        rewritten_query="solar panels",
        results=[],
        errors=errors,
        degradations=[Degradation(kind="provider_failed", provider="alpha", reason="503")],
        providers={f"p{n}": report(status) for n, status in enumerate(statuses)},
        timings={"total": 12.0},
    )


def cached(age_s: float = 7200.0, response: dict[str, Any] | None = None) -> CacheEntry:
    before = SearchResponse(
        task_id="srch_then",
        query="Solar panels",
        rewritten_query="solar panels",
        results=[ProjectedItem(title="Solar", snippet="It works.")],
        summary=[SummarySentence(text="It works.", citations=[])],
        confidence=0.7,
        providers={"alpha": report("ok")},
        timings={"total": 900.0},
    )
    stored = NOW - age_s
    return CacheEntry(
        query_hash="k",
        query="Solar panels",
        result_summary="It works.",
        source_urls=(),
        response=before.model_dump(mode="json") if response is None else response,
        complete=True,
        created_at=stored,
        updated_at=stored,
        expires_at=stored + 3600,
    )


# --- when the ladder is needed, and what is complete --------------------------------


@pytest.mark.parametrize(
    ("statuses", "needed"),
    [
        (("error", "timeout", "skipped"), True),
        ((), True),
        (("error", "empty"), False),
        (("error", "ok"), False),
    ],
)
def test_the_ladder_is_needed_only_when_no_provider_answered(
    statuses: tuple[str, ...], needed: bool
) -> None:
    assert nothing_answered(down(*statuses).providers) is needed


def test_an_answer_is_partial_when_a_failure_could_pass() -> None:
    busy = ProviderUnavailable("503", provider="alpha").info()
    no_key = ErrorInfo(
        code="missing_api_key", category="non_recoverable", message="x", provider="b"
    )
    nothing = ErrorInfo(code="no_results", category="non_recoverable", message="none found")
    skipped = Degradation(kind="breaker_open", provider="alpha", reason="circuit open")
    assert complete([no_key, nothing], []) is True
    assert complete([busy], []) is False
    assert complete([], [skipped]) is False


# --- the cache's answers ------------------------------------------------------------


def test_a_fresh_hit_is_the_stored_answer_under_a_new_task_id() -> None:
    hit = from_cache(cached(), task_id="srch_new", query="solar panels", timings={"total": 1.5})
    assert hit is not None
    assert (hit.task_id, hit.cache, hit.timings) == ("srch_new", "hit", {"total": 1.5})
    assert hit.results[0].title == "Solar" and hit.confidence == 0.7


def test_a_stale_answer_keeps_this_searchs_errors_and_says_how_old_it_is() -> None:
    answer = rescue(
        down("error", "timeout"),
        stale=cached(age_s=7200),
        language="en",
        now=NOW,
        settings=LadderSettings(),
    )
    assert (answer.cache, answer.degraded, answer.task_id) == ("stale", True, "srch_now")
    assert answer.results[0].title == "Solar"
    assert answer.errors[0].code == "provider_unavailable"
    assert set(answer.providers) == {"p0", "p1"} and answer.timings == {"total": 12.0}
    assert [d.kind for d in answer.degradations] == ["provider_failed", "cache_stale"]
    reason = answer.degradations[-1].reason
    assert "no provider answered (p0 error, p1 timeout)" in reason
    assert "2 h old" in reason and "stored 2025-06-15T13:06:40+00:00" in reason


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("zh", "暂时无法检索到相关信息，请换个说法或稍后再试。"),
        (
            "en",
            "No information could be retrieved right now; try other wording or try again later.",
        ),
        (
            "fr",
            "No information could be retrieved right now; try other wording or try again later.",
        ),
    ],
)
def test_with_nothing_cached_the_fallback_answer_speaks_the_querys_language(
    language: str, text: str
) -> None:
    answer = rescue(
        down("error"), stale=None, language=language, now=NOW, settings=LadderSettings()
    )
    assert answer.results == [] and answer.facts == []
    assert (answer.degraded, answer.confidence, answer.cache) == (True, 0.0, "miss")
    (sentence,) = answer.summary
    assert sentence.text == text and sentence.citations == []
    step = answer.degradations[-1]
    assert step.kind == "fallback_answer"
    assert step.reason == "no provider answered (p0 error); nothing cached"
    assert answer.errors[0].code == "provider_unavailable"


def test_the_fallback_says_when_the_request_skipped_the_cache() -> None:
    answer = rescue(
        down("error"),
        stale=None,
        language="en",
        now=NOW,
        settings=LadderSettings(),
        cache_skipped=True,
    )
    assert answer.degradations[-1].reason.endswith("the request skipped the cache")


def test_each_rung_can_be_switched_off() -> None:
    no_stale = LadderSettings(stale_cache=False)
    answer = rescue(down("error"), stale=cached(), language="en", now=NOW, settings=no_stale)
    assert answer.degradations[-1].kind == "fallback_answer"
    bare = LadderSettings(fallback_answer=False)
    empty = rescue(down("error"), stale=None, language="en", now=NOW, settings=bare)
    assert empty.summary == [] and empty.degradations[-1].kind == "provider_failed"


def test_an_unreadable_cached_answer_is_passed_over_for_the_fallback() -> None:
    answer = rescue(
        down("error"),
        stale=cached(response={"written by": "an older sleuth"}),
        language="en",
        now=NOW,
        settings=LadderSettings(),
    )
    assert answer.cache == "miss" and answer.degradations[-1].kind == "fallback_answer"


# --- the gateway's use of the cache -------------------------------------------------


@pytest.fixture
def alpha_beta() -> Iterator[None]:
    with registered(fake_provider("alpha"), fake_provider("beta")):
        yield


def served(**kw: Any) -> Settings:
    return Settings(chain=["alpha", "beta"], providers={"alpha": {}, "beta": {}}, **kw)


async def test_a_repeated_query_is_answered_from_the_cache_without_asking(
    alpha_beta: None,
) -> None:
    cassette = Cassette().add("alpha", "solar", body=ANSWER).add("beta", "solar", body=ANSWER)
    sleuth = Sleuth(served(), cassette.transport(), store=MemoryStore())
    first = await sleuth.search("solar")
    again = await sleuth.search("  SOLAR ")  # the same query, normalised
    assert (first.cache, again.cache) == ("miss", "hit")
    assert again.task_id != first.task_id and again.results == first.results
    assert set(again.timings) == {"guard", "rewrite", "cache", "total"}
    # The cassette held one answer each: a provider asked again would have said replay_miss.
    assert again.errors == []


async def test_no_cache_asks_the_providers_again(alpha_beta: None) -> None:
    cassette = Cassette()
    for _ in range(2):
        cassette.add("alpha", "solar", body=ANSWER).add("beta", "solar", body=ANSWER)
    sleuth = Sleuth(served(), cassette.transport(), store=MemoryStore())
    await sleuth.search("solar")
    again = await sleuth.search({"query": "solar", "no_cache": True})
    assert again.cache == "miss" and again.providers["alpha"].status == "ok"


async def test_a_partial_answer_is_cached_briefly_and_a_complete_one_for_its_ttl(
    alpha_beta: None,
) -> None:
    store = MemoryStore()
    cassette = Cassette().add("alpha", "partial", body=ANSWER)
    for _ in range(3):  # a 503 is retried: beta fails each time
        cassette.add("beta", "partial", status=503, body="busy")
    today = datetime.now(UTC).isoformat()
    dated = {"results": [{**ANSWER["results"][0], "published_at": today}]}  # kept by past_week
    cassette.add("alpha", "whole", body=dated).add("beta", "whole", status=404, body="no")
    sleuth = Sleuth(served(), cassette.transport(), store=store)
    await sleuth.search("partial")
    await sleuth.search({"query": "whole", "time_range": "past_week"})

    async def lifetime(request: SearchRequest) -> tuple[bool, float]:
        read = await store.get_cached(cache_key(request, ["alpha", "beta"]), time.time())
        assert read is not None
        return read.entry.complete, read.entry.expires_at - read.entry.created_at

    # beta's 503 may pass: the answer is partial, kept 5 minutes.
    assert await lifetime(SearchRequest(query="partial")) == (False, pytest.approx(300))
    # A 404 will not change by asking again: complete, kept for past_week's hour.
    week = await lifetime(SearchRequest(query="whole", time_range="past_week"))
    assert week == (True, pytest.approx(3600))
