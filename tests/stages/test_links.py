"""split_link: urlsplit's parts and properties, read once per link."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from sleuth.stages.links import split_link

DATA = Path(__file__).parents[1] / "data"
ODD = [
    "http://[::1]:8080/a",
    "https://user:pass@Example.COM./x;jsessionid=1?a=1#f",
    "http://example.com:/empty-port",
    "http://example.com:99999/",
    "http://example.com:80a/",
    "file:///srv/docs/a.md#ttl",
    "//no-scheme.example/",
    "mailto:someone@example.com",
    "HTTPS://例子.cn/搜索?q=a b",
    "http://%41%42.example/",
    "",
]


def _recorded_links() -> list[str]:
    """Every http(s) link in the recorded provider answers (nobody here wrote them)."""
    text = (DATA / "web.jsonl").read_text(encoding="utf-8")
    return sorted(set(re.findall(r"https?://[^\s\"'<>\\]+", text)))


@pytest.mark.parametrize("url", ODD)
def test_odd_links_split_as_urlsplit_splits_them(url: str) -> None:
    _same_as_urlsplit(url)


def test_recorded_links_split_as_urlsplit_splits_them() -> None:
    links = _recorded_links()
    assert len(links) > 20
    for url in links:
        _same_as_urlsplit(url)


def test_a_link_urlsplit_refuses_is_refused_alike() -> None:
    with pytest.raises(ValueError, match="IPv6"):
        urlsplit("http://[::1/")
    with pytest.raises(ValueError, match="IPv6"):
        split_link("http://[::1/")


def _same_as_urlsplit(url: str) -> None:
    parts, link = urlsplit(url), split_link(url)
    assert (link.scheme, link.netloc, link.path, link.query, link.fragment) == tuple(parts)
    assert (link.hostname, link.username, link.password) == (
        parts.hostname,
        parts.username,
        parts.password,
    )
    try:
        port, error = parts.port, False
    except ValueError:
        port, error = None, True
    assert (link.port, link.port_error) == (port, error)
