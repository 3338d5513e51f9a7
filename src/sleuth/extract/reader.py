"""One page end to end: URL checked, cache, per-host limit, robots.txt, fetch under
the per-page deadline, extraction (in a worker thread: it is CPU work), screening.

Every failure becomes the page's `error` (the error contract), never an exception,
so a batch answers every URL it was given, in order.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from sleuth.egress import EgressPolicy
from sleuth.errors import PolicyViolation, ProviderTimeout, SearchError
from sleuth.extract.cassette import RecordingPageSource, ReplayPageSource
from sleuth.extract.fetch import Fetched, HttpPageSource, PageSource, checked_url, host_of
from sleuth.extract.models import ExtractedPage, ExtractRequest, TlsInfo
from sleuth.extract.robots import PRODUCT_TOKEN, RobotsCache
from sleuth.extract.screening import screened
from sleuth.extract.settings import ExtractSettings
from sleuth.stages.safety.injection import InjectionSettings
from sleuth.store import CacheEntry, CacheStore

if TYPE_CHECKING:
    from sleuth.extract.document import Document

__all__ = ["PageReader", "build_page_source", "page_from_document"]

#: Fields whose absence is reported in `missing`.
_REPORTED = ("title", "text", "published_at")


def build_page_source(
    settings: ExtractSettings,
    *,
    replay: Path | None,
    record: Path | None,
    egress_proxy: str | None,
    egress: EgressPolicy | None,
) -> PageSource:
    """Replayed pages when `replay` is set, else real fetches; recorded when `record` is."""
    source: PageSource
    if replay is not None:
        source = ReplayPageSource.from_file(replay)
    else:
        source = HttpPageSource(
            egress_proxy=egress_proxy, egress=egress, max_redirects=settings.max_redirects
        )
    if record is not None:
        source = RecordingPageSource(source, record)
    return source


def page_from_document(
    url: str, document: Document, *, include_links: bool, fetched: Fetched | None = None
) -> ExtractedPage:
    """The unscreened page for an extracted document."""
    page = ExtractedPage(
        url=url,
        final_url=fetched.final_url if fetched else None,
        title=document.title or "",
        text=document.text,
        published_at=document.published_at,
        modified_at=document.modified_at,
        language=document.language,
        author=document.author,
        site_name=document.site_name,
        content_type=fetched.headers.get("content-type") if fetched else None,
        links=document.links if include_links else None,
        tls=fetched.tls if fetched else TlsInfo(status="none", reason="a local file"),
        truncated=document.truncated,
        flags=["charset_mislabelled"] if document.mislabelled_charset else [],
    )
    missing = [name for name in _REPORTED if not getattr(page, name)]
    return page.model_copy(
        update={
            "missing": missing,
            "degraded": document.mislabelled_charset or "text" in missing,
        }
    )


def error_page(url: str, error: SearchError) -> ExtractedPage:
    tls = TlsInfo(status="none", reason="not fetched")
    if error.code == "tls_invalid":
        tls = TlsInfo(status="invalid", reason=error.message)
    return ExtractedPage(url=url, tls=tls, error=error.info(), degraded=True, missing=["text"])


class PageReader:
    """Reads pages for one `Sleuth`; holds the per-host limits and robots.txt rules."""

    def __init__(
        self,
        settings: ExtractSettings,
        source: PageSource,
        *,
        injection: InjectionSettings,
        cache: CacheStore | None = None,
    ) -> None:
        self.settings = settings
        self.source = source
        self._injection = injection
        self._cache = cache
        # per host: its semaphore and how many fetches hold or await it; an idle
        # host's entry is dropped, so a long-running service keeps no trail of hosts
        self._hosts: dict[str, tuple[asyncio.Semaphore, int]] = {}
        self._robots = RobotsCache(source, user_agent=settings.user_agent)

    async def read_all(self, request: ExtractRequest) -> list[ExtractedPage]:
        """One page per URL of `request`, in its order."""
        return list(
            await asyncio.gather(
                *(
                    self.read(
                        url,
                        include_links=request.include_links,
                        max_chars=request.max_chars,
                        no_cache=request.no_cache,
                    )
                    for url in request.urls
                )
            )
        )

    async def read(
        self,
        url: str,
        *,
        include_links: bool = False,
        max_chars: int | None = None,
        no_cache: bool = False,
        timeout_s: float | None = None,
    ) -> ExtractedPage:
        """The page at `url`, or a page carrying its `error`."""
        deadline = min(timeout_s or self.settings.timeout_s, self.settings.timeout_s)
        try:
            url = checked_url(url, "urls")
            key = self._key(url, include_links, max_chars)
            if not no_cache and (cached := await self._cached(key)) is not None:
                return cached
            async with asyncio.timeout(deadline):
                page = await self._read(url, include_links, max_chars, deadline)
        except TimeoutError:
            return error_page(
                url,
                ProviderTimeout(f"{url} was not read within {deadline:g}s", provider=host_of(url)),
            )
        except SearchError as exc:
            return error_page(url, exc)
        await self._keep(key, url, page)
        return page

    async def _read(
        self, url: str, include_links: bool, max_chars: int | None, deadline: float
    ) -> ExtractedPage:
        limit = min(max_chars or self.settings.max_chars, self.settings.max_chars)
        async with self._host_slot(host_of(url)):
            if self.settings.robots and not await self._robots.allows(url, deadline):
                raise PolicyViolation(
                    f"robots.txt of {host_of(url)} does not allow {PRODUCT_TOKEN!r} to read "
                    f"{url} (extract.robots: false turns this check off)"
                )
            fetched = await self.source.get(
                url,
                timeout_s=deadline,
                max_bytes=self.settings.max_bytes,
                user_agent=self.settings.user_agent,
            )
        # imported on first use: trafilatura and lxml take a third of a second to load,
        # which a search or a CLI command that reads no page should not pay
        from sleuth.extract.document import read_document

        document = await asyncio.to_thread(
            partial(
                read_document,
                fetched.body,
                fetched.headers.get("content-type"),
                fetched.final_url,
                max_chars=limit,
                include_links=include_links,
            )
        )
        page = page_from_document(url, document, include_links=include_links, fetched=fetched)
        return screened(page, self._injection)

    @asynccontextmanager
    async def _host_slot(self, host: str) -> AsyncIterator[None]:
        gate, users = self._hosts.get(host) or (asyncio.Semaphore(self.settings.per_host), 0)
        self._hosts[host] = (gate, users + 1)
        try:
            async with gate:
                yield
        finally:
            gate, users = self._hosts[host]
            if users == 1:
                del self._hosts[host]
            else:
                self._hosts[host] = (gate, users - 1)

    def _key(self, url: str, include_links: bool, max_chars: int | None) -> str:
        shape = json.dumps([url, include_links, max_chars])
        return "page:" + hashlib.sha256(shape.encode()).hexdigest()

    async def _cached(self, key: str) -> ExtractedPage | None:
        if self._cache is None or self.settings.cache_ttl_s == 0:
            return None
        read = await self._cache.get_cached(key, time.time())
        if read is None or not read.fresh:
            return None
        return ExtractedPage.model_validate(read.entry.response)

    async def _keep(self, key: str, url: str, page: ExtractedPage) -> None:
        if self._cache is None or self.settings.cache_ttl_s == 0 or page.error is not None:
            return
        now = time.time()
        await self._cache.put_cached(
            CacheEntry(
                query_hash=key,
                query=url,
                result_summary=page.title,
                source_urls=(url,),
                response=page.model_dump(mode="json"),
                complete=True,
                created_at=now,
                updated_at=now,
                expires_at=now + self.settings.cache_ttl_s,
            )
        )

    async def aclose(self) -> None:
        await self.source.aclose()
