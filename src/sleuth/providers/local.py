"""The local knowledge base (`sleuth index PATH`) as a provider.

The request is described with the `kb:` scheme; `sleuth.transport` answers it from
the SQLite index and hands back a JSON body of this shape, which is also what a
cassette records:

    {"results": [{"url": "file:///…/guide.md", "title": "…", "snippet": "…",
                  "published_at": "2026-11-02T10:00:00+00:00", "path": "guide.md",
                  "score": 4.21, "source": "handbook", "tags": ["howto"],
                  "modified_at": "2026-11-20T08:00:00+00:00", "next_score": 3.87}]}

It filters natively: by the source names of `domain_filter` (`sources`), by `tags`,
and by `time_range` on each document's `modified_at` (its front matter's, else the
file's mtime), counted back from the gateway's clock. `source`, `tags` and
`modified_at` reach the result's `fields`, and `next_score` (the next best
document's score, for the answer's confidence).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
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
from sleuth.stages.results.scope import RANGE_SPAN

INFO = ProviderInfo(
    name="local",
    docs_url="https://github.com/quickwit-oss/tantivy-py",
    needs_key=False,
    time_range=True,
    domain_filter=False,
    language=False,
    # The knowledge base analyses the question itself (stems, function words as phrase
    # context, Chinese segmentation): the whole wording ranks better than keywords.
    query_style="natural",
    max_results=50,
    text_format="text",
    remote=False,
    sources=True,
)


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    params = {"q": query.text, "limit": str(min(query.max_results, INFO.max_results))}
    if query.sources:
        params["sources"] = ",".join(query.sources)
    if query.tags:
        params["tags"] = ",".join(query.tags)
    span = RANGE_SPAN[query.time_range]
    if span is not None:
        params["since"] = ((query.now or datetime.now(UTC)) - span).isoformat(timespec="seconds")
    return HttpRequest(method="GET", url=settings.base_url or "kb:search", params=params)


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    check_status(INFO.name, status, headers, body)
    return apply(mapping, expect_object(INFO.name, body))


PROVIDER = Provider(INFO, build_request, parse_response)
