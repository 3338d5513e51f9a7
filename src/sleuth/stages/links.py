"""One reading of a link, shared by the stages that look at links.

`urllib.parse.urlsplit` caches its split, but each read of `hostname`, `port`,
`username` or `password` parses the authority again, and one search reads every
result's link in normalize, output safety, dedupe, the content policy and the dates.
`split_link` reads them once per link; pure, so cached.

>>> link = split_link("https://User@Example.COM:8443/a?b=1#c")
>>> link.hostname, link.port, link.username, link.path
('example.com', 8443, 'User', '/a')
>>> split_link("http://example.com:99999/").port_error
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = ["Link", "split_link"]


@dataclass(frozen=True, slots=True)
class Link:
    """`urlsplit`'s parts and properties, read once. `port` is None, with `port_error`
    set, where `SplitResult.port` would raise (not a number, or out of range)."""

    scheme: str
    netloc: str
    path: str
    query: str
    fragment: str
    hostname: str | None
    port: int | None
    port_error: bool
    username: str | None
    password: str | None


@lru_cache(maxsize=4096)
def split_link(url: str) -> Link:
    """`url` split as `urllib.parse.urlsplit` splits it; raises its ValueError (an
    unclosed IPv6 bracket, say)."""
    parts = urlsplit(url)
    try:
        port, port_error = parts.port, False
    except ValueError:
        port, port_error = None, True
    return Link(
        parts.scheme,
        parts.netloc,
        parts.path,
        parts.query,
        parts.fragment,
        parts.hostname,
        port,
        port_error,
        parts.username,
        parts.password,
    )
