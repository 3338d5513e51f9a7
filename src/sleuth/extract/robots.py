"""robots.txt, as RFC 9309 reads it: fetched once per origin (through the same page
source, so the same egress rules), kept for `ttl_s`, and asked whether sleuth's
product token may read a path.

A robots.txt that is missing or refused (4xx) allows everything; one the site could
not serve (5xx, unreachable, too slow) disallows everything for now, as the RFC
asks; a replayed run whose cassette holds none allows everything.

>>> rules = parse_rules("User-agent: sleuth\\nDisallow: /private\\n")
>>> rules.can_fetch("sleuth", "https://example.org/private/a"), rules.can_fetch(
...     "sleuth", "https://example.org/public")
(False, True)
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

from sleuth.errors import EgressDenied, ProviderError, ReplayMiss, SearchError, TlsInvalid
from sleuth.extract.fetch import PageSource

__all__ = ["PRODUCT_TOKEN", "RobotsCache", "parse_rules"]

#: The name sleuth answers to in a robots.txt `User-agent:` line.
PRODUCT_TOKEN = "sleuth"  # noqa: S105 (a robots.txt name, not a secret)
_MAX_BYTES = 500_000  # the RFC's minimum a crawler must read
_MAX_ORIGINS = 10_000  # robots.txt rules kept at once
_ALLOW_ALL = "User-agent: *\nAllow: /\n"
_DISALLOW_ALL = "User-agent: *\nDisallow: /\n"


def parse_rules(text: str) -> RobotFileParser:
    parser = RobotFileParser()
    parser.parse(text.splitlines())
    return parser


class RobotsCache:
    def __init__(self, source: PageSource, *, user_agent: str, ttl_s: float = 3600) -> None:
        self._source = source
        self._user_agent = user_agent
        self._ttl_s = ttl_s
        self._rules: dict[str, tuple[float, RobotFileParser]] = {}

    async def allows(self, url: str, timeout_s: float) -> bool:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        now = time.monotonic()
        cached = self._rules.get(origin)
        if cached is None or cached[0] < now:
            cached = (now + self._ttl_s, parse_rules(await self._read(origin, timeout_s)))
            if len(self._rules) >= _MAX_ORIGINS:  # forget the expired ones first
                self._rules = {k: v for k, v in self._rules.items() if v[0] >= now}
                if len(self._rules) >= _MAX_ORIGINS:
                    self._rules.clear()
            self._rules[origin] = cached
        return cached[1].can_fetch(PRODUCT_TOKEN, url)

    async def _read(self, origin: str, timeout_s: float) -> str:
        try:
            fetched = await self._source.get(
                f"{origin}/robots.txt",
                timeout_s=timeout_s,
                max_bytes=_MAX_BYTES,
                user_agent=self._user_agent,
            )
        except ReplayMiss:
            return _ALLOW_ALL
        except (EgressDenied, TlsInvalid):
            raise  # the page itself would meet the same refusal: say that, not robots
        except ProviderError as exc:
            status = exc.http_status or 0
            return _ALLOW_ALL if 400 <= status < 500 else _DISALLOW_ALL
        except SearchError:
            return _DISALLOW_ALL
        return fetched.body.decode("utf-8", errors="replace")
