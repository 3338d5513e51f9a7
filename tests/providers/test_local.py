"""The local provider over named sources: the seed's `internal_search` request, end to
end through the gateway and a real knowledge base."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sleuth import providers
from sleuth.config import Settings
from sleuth.errors import InvalidRequest
from sleuth.gateway import Sleuth
from sleuth.kb import index_source
from sleuth.providers.base import ProviderQuery, ProviderSettings
from sleuth.transport import HttpTransport

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LOCAL = providers.get("local")


def test_the_request_carries_sources_tags_and_the_time_range_as_a_date() -> None:
    query = ProviderQuery(
        text="投诉",
        original="投诉",
        max_results=10,
        language="zh",
        time_range="past_week",
        sources=("support_tickets", "customer_feedback"),
        tags=("policy",),
        now=NOW,
    )
    request = LOCAL.build_request(query, ProviderSettings(base_url="kb:search"))
    assert request.params == {
        "q": "投诉",
        "limit": "10",
        "sources": "support_tickets,customer_feedback",
        "tags": "policy",
        "since": "2026-11-24T12:00:00+00:00",
    }
    plain = LOCAL.build_request(
        ProviderQuery(text="q", original="q", max_results=5, language="en"),
        ProviderSettings(base_url="kb:search"),
    )
    assert plain.params == {"q": "q", "limit": "5"}


def write(path: Path, text: str, days_old: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    stamp = (NOW - timedelta(days=days_old)).timestamp()
    os.utime(path, (stamp, stamp))


@pytest.fixture
def config(tmp_path: Path) -> Settings:
    write(tmp_path / "tickets/a.md", "# 工单 1024\n\n客户投诉 Sleuth Pro 导出失败。", 2)
    write(tmp_path / "tickets/b.md", "# 工单 877\n\n客户投诉 Sleuth Pro 登录很慢。", 30)
    write(
        tmp_path / "feedback/c.md",
        "---\ntags: [policy]\n---\n# 反馈\n\n客户投诉 Sleuth Pro 价格太高。",
        1,
    )
    write(tmp_path / "wiki/d.md", "# 介绍\n\n客户投诉 Sleuth Pro 的处理流程。", 1)
    kb = {
        "path": tmp_path / "kb.sqlite",
        "sources": {
            "support_tickets": {"paths": [tmp_path / "tickets"]},
            "customer_feedback": {"paths": [tmp_path / "feedback"]},
            "wiki": {"paths": [tmp_path / "wiki"]},
        },
    }
    settings = Settings(
        kb=kb,
        chain=["local", "wikipedia"],
        store={"backend": "memory"},
        projection={"optional": ["url", "published_at", "fields"]},
    )
    for name, source in settings.kb.sources.items():
        index_source(settings.kb.path, name, source)
    return settings


@pytest.fixture
async def sleuth(config: Settings) -> AsyncIterator[Sleuth]:
    transport = HttpTransport(kb_path=config.kb.path)
    try:
        yield Sleuth(config, transport, clock=lambda: NOW)
    finally:
        await transport.aclose()


async def ask(sleuth: Sleuth, **request: Any) -> tuple[list[str], list[dict[str, Any]]]:
    response = await sleuth.search({"query": "最近一周关于 Sleuth Pro 的客户投诉", **request})
    # Only the knowledge base was asked: the web back end in the chain cannot hold sources.
    assert list(response.providers) == ["local"]
    assert response.degradations == []
    return sorted((item.url or "").rsplit("/", 1)[-1] for item in response.results), [
        item.fields for item in response.results
    ]


async def test_the_seed_internal_search_reads_two_named_sources_of_the_past_week(
    sleuth: Sleuth,
) -> None:
    names, fields = await ask(
        sleuth,
        time_range="past_week",
        domain_filter=["support_tickets", "customer_feedback"],
        include=["url", "fields"],
    )
    # b.md is a month old; d.md is in another source.
    assert names == ["a.md#工单-1024", "c.md#反馈"]
    assert {entry["source"] for entry in fields} == {"support_tickets", "customer_feedback"}
    assert all(entry["modified_at"] >= (NOW - timedelta(days=7)).isoformat() for entry in fields)


async def test_tags_scope_a_search_to_the_documents_carrying_them(sleuth: Sleuth) -> None:
    names, fields = await ask(sleuth, tags=["Policy"], include=["url", "fields"])
    assert names == ["c.md#反馈"]
    assert fields[0]["tags"] == ["policy"]


async def test_an_unknown_source_name_is_refused_naming_the_configured_ones(
    sleuth: Sleuth,
) -> None:
    with pytest.raises(InvalidRequest, match="neither a domain") as caught:
        await sleuth.search({"query": "q", "domain_filter": ["support_tix"]})
    assert caught.value.field == "domain_filter"
    assert caught.value.allowed == ["support_tickets", "customer_feedback", "wiki"]


async def test_sources_asked_of_web_back_ends_only_are_refused(sleuth: Sleuth) -> None:
    with pytest.raises(
        InvalidRequest, match="only the local knowledge base holds tagged"
    ) as caught:
        await sleuth.search({"query": "q", "tags": ["policy"], "providers": ["wikipedia"]})
    assert caught.value.field == "tags"
