"""The local knowledge base (`sleuth index PATH`) as a provider.

The request is described with the `kb:` scheme; `sleuth.transport` answers it from
the SQLite index and hands back a JSON body of this shape, which is also what a
cassette records:

    {"results": [{"url": "file:///…/guide.md", "title": "…", "snippet": "…",
                  "published_at": "2026-11-02T10:00:00+00:00", "path": "guide.md",
                  "score": 4.21}]}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sleuth.providers.base import (
    HttpRequest,
    Provider,
    ProviderInfo,
    ProviderQuery,
    ProviderSettings,
    RawHit,
    check_status,
    expect_object,
)
from sleuth.providers.mapping import FieldMapping, apply

INFO = ProviderInfo(
    name="local",
    docs_url="https://github.com/quickwit-oss/tantivy-py",
    needs_key=False,
    time_range=False,
    domain_filter=False,
    language=False,
    # The knowledge base analyses the question itself (stems, function words as phrase
    # context, Chinese segmentation): the whole wording ranks better than keywords.
    query_style="natural",
    max_results=50,
    text_format="text",
    remote=False,
)


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    return HttpRequest(
        method="GET",
        url=settings.base_url or "kb:search",
        params={"q": query.text, "limit": str(min(query.max_results, INFO.max_results))},
    )


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    check_status(INFO.name, status, headers, body)
    return apply(mapping, expect_object(INFO.name, body))


PROVIDER = Provider(INFO, build_request, parse_response)
