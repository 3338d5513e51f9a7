"""Record and replay fetched pages, so tests and demos run offline.

A page line sits in the same JSON Lines cassette as provider exchanges (the
provider replay skips it):

    {"page": "https://example.org/a", "final_url": "https://example.org/a",
     "status": 200, "headers": {"content-type": "text/html; charset=utf-8"},
     "body": "<html>...", "tls": "valid"}

Binary bodies (a PDF) are stored as `body_base64` instead of `body`. A fetch with
no line for its URL is a `ReplayMiss`.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sleuth.errors import ConfigError, ReplayMiss, from_status
from sleuth.extract.fetch import Fetched, PageSource, host_of
from sleuth.extract.models import TlsInfo
from sleuth.transport import read_cassette

__all__ = ["RecordingPageSource", "ReplayPageSource", "page_line"]

_KEPT_HEADERS = ("content-type", "content-language", "last-modified", "date")


def page_line(fetched: Fetched) -> dict[str, Any]:
    """The cassette line for one fetched page."""
    line: dict[str, Any] = {
        "page": fetched.url,
        "final_url": fetched.final_url,
        "status": fetched.status,
        "headers": {k: v for k, v in fetched.headers.items() if k in _KEPT_HEADERS},
        "tls": fetched.tls.status,
    }
    try:
        line["body"] = fetched.body.decode("utf-8")
    except UnicodeDecodeError:
        line["body_base64"] = base64.b64encode(fetched.body).decode("ascii")
    return line


def _fetched(entry: Mapping[str, Any]) -> Fetched:
    if "body_base64" in entry:
        body = base64.b64decode(entry["body_base64"])
    else:
        body = str(entry.get("body", "")).encode("utf-8")
    tls = str(entry.get("tls") or ("valid" if str(entry["page"]).startswith("https") else "none"))
    reason = "replayed" if tls != "none" else "plain http (replayed)"
    return Fetched(
        str(entry["page"]),
        str(entry.get("final_url") or entry["page"]),
        int(entry["status"]),
        {str(k).lower(): str(v) for k, v in (entry.get("headers") or {}).items()},
        body,
        TlsInfo.model_validate({"status": tls, "reason": reason}),
    )


class ReplayPageSource:
    def __init__(self, entries: Iterable[Mapping[str, Any]], source: str = "cassette") -> None:
        self._pages: dict[str, Fetched] = {}
        for line_no, entry in enumerate(entries, start=1):
            if "page" not in entry:
                continue
            try:
                self._pages[str(entry["page"])] = _fetched(entry)
            except (KeyError, TypeError, ValueError) as exc:
                raise ConfigError(f"{source} line {line_no}: missing or bad {exc}") from exc

    @classmethod
    def from_file(cls, cassette: Path) -> ReplayPageSource:
        return cls(read_cassette(cassette), source=f"cassette {cassette}")

    async def get(self, url: str, *, timeout_s: float, max_bytes: int, user_agent: str) -> Fetched:
        fetched = self._pages.get(url)
        if fetched is None:
            raise ReplayMiss(f"the cassette has no page {url!r}", provider=host_of(url))
        if not 200 <= fetched.status < 300:
            raise from_status(host_of(url), fetched.status, f"{url} could not be read")
        return fetched

    async def aclose(self) -> None:
        return None


class RecordingPageSource:
    """Passes fetches to `inner` and appends each page it got to `cassette`."""

    def __init__(self, inner: PageSource, cassette: Path) -> None:
        self._inner = inner
        self._cassette = cassette

    async def get(self, url: str, *, timeout_s: float, max_bytes: int, user_agent: str) -> Fetched:
        fetched = await self._inner.get(
            url, timeout_s=timeout_s, max_bytes=max_bytes, user_agent=user_agent
        )
        line = json.dumps(page_line(fetched), ensure_ascii=False)
        await asyncio.to_thread(self._append, line)
        return fetched

    def _append(self, line: str) -> None:
        self._cassette.parent.mkdir(parents=True, exist_ok=True)
        with self._cassette.open("a", encoding="utf-8") as out:
            out.write(line + "\n")

    async def aclose(self) -> None:
        await self._inner.aclose()
