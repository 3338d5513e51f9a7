"""One reading of a link, shared by the stages that look at links.

`urllib.parse.urlsplit` caches its split, but each read of `hostname`, `port`,
`username` or `password` parses the authority again, and one search reads every
result's link in normalize, output safety, dedupe, the content policy and the dates.
`split_link` reads them once per link; pure, so cached.

Most links are plain ASCII ones: those are split by one regular expression and their
authority by three partitions, to the same parts in about half the time of `urlsplit`
and its properties (tests/stages/test_links.py compares the two on generated links). Any
other link (a character `urlsplit` removes or strips, a non-ASCII one, brackets in
the authority) is split by `urlsplit` itself.

>>> link = split_link("https://User@Example.COM:8443/a?b=1#c")
>>> link.hostname, link.port, link.username, link.path
('example.com', 8443, 'User', '/a')
>>> split_link("http://example.com:99999/").port_error
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = ["Link", "split_link"]

# urlsplit's reading of a link: a scheme (a letter, then scheme characters) before the
# first ":", an authority after "//" up to the first of "/?#", a fragment after the
# first "#" and a query after the first "?" before it.
_PLAIN_LINK = re.compile(
    r"(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?",
    re.DOTALL,
)
_PORT_MAX = 65535


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
    return _split_plain(url) or _split_by_urllib(url)


def _split_plain(url: str) -> Link | None:
    """A plain link's parts, or None for one only `urlsplit` reads right: with a
    leading control character or space (stripped), a tab or line break (removed),
    non-ASCII (checked under NFKC) or brackets in the authority (IPv6)."""
    if (
        not url.isascii()
        or url[:1] <= " "
        or "\t" in url
        or "\n" in url
        or "\r" in url
        or "[" in url
        or "]" in url
    ):
        return None
    match = _PLAIN_LINK.fullmatch(url)
    if match is None:  # cannot happen (every part may be empty); urlsplit decides
        return None
    scheme, netloc, path, query, fragment = match.groups()
    netloc = netloc or ""
    # SplitResult's _userinfo, _hostinfo, hostname and port, without brackets.
    userinfo, at, hostinfo = netloc.rpartition("@")
    username: str | None = None
    password: str | None = None
    if at:
        username, colon, password = userinfo.partition(":")
        if not colon:
            password = None
    host, _, port_text = hostinfo.partition(":")
    hostname: str | None = None
    if host:
        name, percent, zone = host.partition("%")  # a zone keeps its case
        hostname = name.lower() + percent + zone
    port: int | None = None
    port_error = False
    if port_text:
        if port_text.isdigit() and int(port_text) <= _PORT_MAX:
            port = int(port_text)
        else:
            port_error = True
    return Link(
        (scheme or "").lower(),
        netloc,
        path,
        query or "",
        fragment or "",
        hostname,
        port,
        port_error,
        username,
        password,
    )


def _split_by_urllib(url: str) -> Link:
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
