"""Provider hits to `ResultItem`s: one shape, whatever the back end called its fields.

Dates are parsed as sent (ISO 8601 / RFC 3339, RFC 2822) and never guessed; a date
that does not parse is dropped, not repaired. The freshness label here comes from
the provider's own date only.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from sleuth.contract import ResultItem
from sleuth.providers.base import RawHit
from sleuth.stages.freshness import freshness_of
from sleuth.stages.links import split_link


def parse_date(value: str | None) -> datetime | None:
    """A timezone-aware datetime from an ISO 8601 or RFC 2822 string; naive means UTC."""
    if not value:
        return None
    text = value.strip()
    parsed: datetime | None
    try:
        parsed = datetime.fromisoformat(text.replace(" ", "T", 1) if " " in text[:11] else text)
    except ValueError:
        try:
            parsed = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def domain_of(url: str | None) -> str | None:
    if not url:
        return None
    host = split_link(url).hostname
    return host.removeprefix("www.") if host else None


def item_id(url: str | None, title: str, snippet: str) -> str:
    key = url or f"{title}\n{snippet}"
    return hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()


def normalize(
    provider: str, hits: Sequence[RawHit], now: datetime, *, plain_text: bool = False
) -> list[ResultItem]:
    """`plain_text`: the provider's text is not HTML; it is escaped here so that the
    clean stage's tag stripping keeps a literal `<KEY>` or `a<b`."""
    items = []
    # Validation keeps values of the declared types as they are: built from such values
    # without it (a provider's text fields are str or None, extras keyed by str names).
    build = ResultItem.from_valid if type(provider) is str else ResultItem
    for position, hit in enumerate(hits, start=1):
        title = (hit.title or "").strip()
        snippet = (hit.snippet or "").strip()
        if plain_text:
            title, snippet = html.escape(title, quote=False), html.escape(snippet, quote=False)
        published = parse_date(hit.published_at)
        if published is not None and published > now:
            published = None  # a date in the future is a back-end error, not a fact
        url = hit.url
        fields = dict(hit.fields)
        make = (
            build
            if (url is None or type(url) is str)
            and all(type(name) is str for name in fields)
            and all(type(name) is str for name in hit.fell_back)
            else ResultItem
        )
        items.append(
            make(
                id=item_id(url, title, snippet),
                url=url,
                title=title,
                snippet=snippet,
                domain=domain_of(url),
                providers=[provider],
                ranks={provider: position},
                published_at=published,
                freshness=freshness_of(published, now),
                dated_from="provider" if published else None,
                sources=[url] if url else [],
                fields=fields,
                degraded=bool(hit.fell_back),
                missing=list(hit.fell_back),
            )
        )
    return items
