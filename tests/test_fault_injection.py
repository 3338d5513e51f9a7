"""Searches against a real misbehaving server: every fault is classified by the error
rules, the search answers within its deadline, the healthy provider's results are
kept, and nothing escapes. Then the issue's must-shows: a failing provider replaced by
its backup, the stale cache and the fallback answer, and rules edited while running.

The provider under test (`faulty`) points at the fault server (`tests/fault_server.py`)
in the mode under test: the built-in `searxng`, and `declared_searxng`, a provider
declared in YAML alone (`tests/data/yaml_provider/fault_suite.yaml`), which must behave
the same. `mirror`, a second SearXNG-speaking provider, points at the same server's
healthy mode.
These tests wait for real (a real server is the point), each at most its 1.5 s deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from fault_server import MODES, FaultServer
from sleuth.config import Settings
from sleuth.contract import SearchRequest, SearchResponse
from sleuth.gateway import Sleuth
from sleuth.mapping_files import MappingFiles
from sleuth.providers import searxng
from sleuth.providers.base import Provider
from sleuth.store import SqliteStore, cache_key
from sleuth.testing import registered

DEADLINE_S = 1.5
YAML_PROVIDER = Path(__file__).parent / "data" / "yaml_provider" / "fault_suite.yaml"
QUERY = "python 3.13 release notes"

#: mode -> (code, category, action) the built-in rules give it.
EXPECTED = {
    "timeout": ("provider_timeout", "recoverable", "retry"),
    "trickle": ("provider_timeout", "recoverable", "retry"),
    "429": ("rate_limited", "recoverable", "retry"),
    "500": ("server_error", "recoverable", "retry"),
    "502": ("provider_unavailable", "recoverable", "retry"),
    "503": ("provider_unavailable", "recoverable", "retry"),
    "504": ("provider_unavailable", "recoverable", "retry"),
    "451": ("geoblocked", "recoverable", "fallback"),
    "400": ("policy_violation", "non_recoverable", "report"),
    "401": ("auth_failed", "non_recoverable", "fallback"),
    "malformed": ("bad_response", "unexpected", "open_breaker"),
    "truncated": ("connection_failed", "recoverable", "retry"),
    "html": ("wrong_content_type", "unexpected", "open_breaker"),
    "captcha": ("captcha", "unexpected", "open_breaker"),
    "huge": ("body_too_large", "unexpected", "open_breaker"),
    "refused": ("connection_failed", "recoverable", "retry"),
    "reset": ("connection_failed", "recoverable", "retry"),
    "empty": ("no_results", "non_recoverable", "report"),
}


def test_every_fault_mode_has_an_expected_classification() -> None:
    # "ok" and "slow" are healthy answers, not faults.
    assert set(EXPECTED) == {*MODES, "refused"} - {"ok", "slow"}


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    with FaultServer() as started:
        yield started


@pytest.fixture(params=["searxng", "declared_searxng"])
def faulty(request: pytest.FixtureRequest) -> str:
    """The provider the faults are served to: built in, or declared in YAML alone."""
    name: str = request.param
    return name


#: Modes that never finish answering, and the provider timeout under the deadline that
#: ends them (so a hang is the provider's timeout, not the deadline's).
HANGS = ("timeout", "trickle")
HANG_TIMEOUT_S = 0.5


def faulty_config(name: str, base_url: str) -> dict[str, Any]:
    # The default provider timeout (past the deadline) for the answers that come at
    # once: the server is a thread of this process, and on a loaded machine it can
    # take half a second to send a 503; a tight timeout would then be the last error.
    config: dict[str, Any] = {"enabled": True, "base_url": base_url}
    if name != "searxng":
        config.update(yaml.safe_load(YAML_PROVIDER.read_text(encoding="utf-8")))
    return config


@pytest.fixture(autouse=True)
def mirror() -> Iterator[None]:
    """A second provider speaking SearXNG's API, so both can be real HTTP back ends."""
    twin = Provider(
        replace(searxng.INFO, name="mirror"),
        searxng.build_request,
        searxng.parse_response,
        default_mapping=MappingFiles(None).for_provider(searxng.PROVIDER),
    )
    with registered(twin):
        yield


def url(server: FaultServer, mode: str) -> str:
    return server.refused_url if mode == "refused" else server.url_for(mode)


def settings(
    faulty: str, server: FaultServer, faulty_url: str, mirror_url: str | None = None, **kw: Any
) -> Settings:
    base: dict[str, Any] = {
        "chain": [faulty, "mirror"],
        "deadline_s": DEADLINE_S,
        "store": {"backend": "memory"},
        "egress": {"allow_private": ["127.0.0.1"]},  # the misbehaving servers are local
        "providers": {
            faulty: faulty_config(faulty, faulty_url),
            "mirror": {"base_url": mirror_url or server.url_for("ok")},
        },
    }
    base.update(kw)
    return Settings(**base)


async def timed_search(sleuth: Sleuth, request: Any = QUERY) -> tuple[SearchResponse, float]:
    started = time.perf_counter()
    response = await sleuth.search(request)
    return response, time.perf_counter() - started


@pytest.mark.parametrize("mode", sorted(EXPECTED))
async def test_a_fault_is_classified_and_the_healthy_answer_kept_within_the_deadline(
    server: FaultServer, mode: str, faulty: str
) -> None:
    served = settings(faulty, server, url(server, mode))
    if mode in HANGS:
        served.providers[faulty].timeout_s = HANG_TIMEOUT_S
    async with Sleuth(served) as sleuth:
        response, elapsed = await timed_search(sleuth)
    assert elapsed < DEADLINE_S + 0.5
    (error,) = [e for e in response.errors if e.provider == faulty]
    assert (error.code, error.category, error.action) == EXPECTED[mode]
    assert response.providers[faulty].status == ("empty" if mode == "empty" else "error")
    assert response.providers["mirror"].status == "ok"
    assert response.results, "the healthy provider's results are kept"
    if mode == "429":
        assert error.retry_after_s == 2.0  # longer than the deadline allows: not waited for


async def test_a_failing_provider_is_replaced_by_its_backup_within_the_deadline(
    server: FaultServer, faulty: str
) -> None:
    """Must-show: A answers 504 every time (four queued), B is healthy."""
    server.queue("504", "504", "504", "504")
    served = settings(faulty, server, server.url, chain=[faulty], backups=["mirror"])
    async with Sleuth(served) as sleuth:
        response, elapsed = await timed_search(sleuth)
    assert elapsed < DEADLINE_S
    assert response.results and response.providers["mirror"].status == "ok"
    (error,) = response.errors
    assert (error.provider, error.code, error.category, error.http_status) == (
        faulty,
        "provider_unavailable",
        "recoverable",
        504,
    )
    (fallback,) = [d for d in response.degradations if d.kind == "fallback"]
    assert fallback.provider == faulty and "mirror" in fallback.reason
    assert response.degraded is True


async def test_with_every_provider_down_a_cached_answer_returns_stale(
    server: FaultServer, tmp_path: Path, faulty: str
) -> None:
    """Must-show: the query was answered before; now every provider is down."""
    store = SqliteStore(tmp_path / "state.sqlite")
    healthy = settings(faulty, server, server.url_for("ok"))
    async with Sleuth(healthy, store=store) as sleuth:
        before, _ = await timed_search(sleuth)
    assert before.cache == "miss" and before.results
    # Time passes: the entry is past its freshness.
    key = cache_key(SearchRequest(query=QUERY), healthy.chain)
    read = await store.get_cached(key, time.time())
    assert read is not None and read.fresh
    await store.put_cached(replace(read.entry, expires_at=time.time() - 1))

    down = settings(faulty, server, server.url_for("503"), server.refused_url)
    async with Sleuth(down, store=store) as sleuth:
        response, elapsed = await timed_search(sleuth)
    await store.aclose()
    assert elapsed < DEADLINE_S + 0.5
    assert (response.cache, response.degraded) == ("stale", True)
    assert [item.title for item in response.results] == [item.title for item in before.results]
    assert response.degradations[-1].kind == "cache_stale"
    assert {e.provider for e in response.errors} == {faulty, "mirror"}


@pytest.mark.parametrize(
    ("query", "sentence"),
    [
        ("从未问过的问题：量子猫的寿命", "暂时无法检索到相关信息，请换个说法或稍后再试。"),
        ("a question never asked before", "No information could be retrieved right now"),
    ],
)
async def test_with_every_provider_down_and_nothing_cached_the_fallback_answer(
    server: FaultServer, query: str, sentence: str, faulty: str
) -> None:
    down = settings(faulty, server, server.url_for("html"), server.url_for("401"))
    async with Sleuth(down) as sleuth:
        response, elapsed = await timed_search(sleuth, query)
    assert elapsed < DEADLINE_S + 0.5
    assert response.results == [] and response.degraded is True
    assert response.confidence == 0.0
    (summary,) = response.summary
    assert summary.text.startswith(sentence) and summary.citations == []
    assert response.degradations[-1].kind == "fallback_answer"
    assert {e.code for e in response.errors} == {"wrong_content_type", "auth_failed"}


async def test_an_edited_rules_file_changes_the_next_calls_classification(
    server: FaultServer, tmp_path: Path, faulty: str
) -> None:
    """Must-show: the rules file is edited while the service runs."""
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "rules:\n"
        "  - match: {status: 503}\n"
        "    then: {category: non_recoverable, code: upstream_busy, action: fallback}\n"
        "  - match: {}\n"
        "    then: {category: unexpected, action: open_breaker}\n",
        encoding="utf-8",
    )
    served = settings(faulty, server, server.url_for("503"), rules={"path": str(rules)})
    request = {"query": QUERY, "no_cache": True}
    async with Sleuth(served) as sleuth:
        first, _ = await timed_search(sleuth, request)
        rules.write_text(
            "rules:\n"
            "  - name: busy means later\n"
            "    match: {status: 503, body_contains: overloaded}\n"
            "    then: {category: recoverable, code: engines_overloaded, action: retry}\n"
            "  - match: {}\n"
            "    then: {category: unexpected, action: open_breaker}\n",
            encoding="utf-8",
        )
        second, _ = await timed_search(sleuth, request)
    (before,) = [e for e in first.errors if e.provider == faulty]
    (after,) = [e for e in second.errors if e.provider == faulty]
    assert (before.code, before.category, before.action) == (
        "upstream_busy",
        "non_recoverable",
        "fallback",
    )
    assert (after.code, after.category, after.action) == (
        "engines_overloaded",
        "recoverable",
        "retry",
    )
    assert (first.providers[faulty].retries, second.providers[faulty].retries) == (0, 2)


async def test_a_captcha_that_keeps_coming_opens_the_breaker_and_the_next_search_skips_it(
    server: FaultServer, faulty: str
) -> None:
    request = {"query": QUERY, "no_cache": True}
    asked_before = len(server.requests)
    async with Sleuth(settings(faulty, server, server.url_for("captcha"))) as sleuth:
        captchas = [(await timed_search(sleuth, request))[0] for _ in range(4)]
        second, _ = await timed_search(sleuth, request)
    for first in captchas:  # a CAPTCHA page one to three times: still asked
        assert first.errors[0].action == "open_breaker"
        assert first.providers[faulty].status == "error"
    assert second.providers[faulty].status == "skipped"
    (skip,) = [d for d in second.degradations if d.kind == "breaker_open"]
    assert skip.provider == faulty and "captcha" in skip.reason
    assert "skipped until" in skip.reason
    assert second.results  # mirror still answers
    captcha_calls = [r for r in server.requests[asked_before:] if r.mode == "captcha"]
    assert len(captcha_calls) == 4


async def test_a_search_that_waited_before_it_started_still_answers_by_its_deadline(
    server: FaultServer, faulty: str
) -> None:
    """The deadline counts from when the search was asked (the HTTP layer passes the
    request's arrival): one that waited 1.2 s of its 1.5 s answers within the rest,
    well before the hung provider's own timeout (the full deadline here)."""
    hung = settings(faulty, server, server.url_for("timeout"))
    hung.providers[faulty].timeout_s = DEADLINE_S
    async with Sleuth(hung) as sleuth:
        started = time.perf_counter()
        response = await sleuth.search(
            {"query": QUERY, "no_cache": True}, arrived=started - (DEADLINE_S - 0.3)
        )
        elapsed = time.perf_counter() - started
    assert elapsed < DEADLINE_S - 0.5
    assert response.providers[faulty].status in ("timeout", "error")
    assert response.providers["mirror"].status == "ok" and response.results
