"""split_link: urlsplit's parts and properties, read once per link."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import hypothesis
import pytest
from hypothesis import given
from hypothesis import strategies as st

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


# Pieces links are made of, odd ones included: the plain-link split must read every
# mix of them as urlsplit does (or hand the link to urlsplit).
_ODD_PIECES = ["", ":", "//", "/", "?", "#", "@", "%", "[", "]", " ", "\t", "\n", "\x00", "\u2100"]
_SCHEMES = st.sampled_from(["", "http:", "HTTPS:", "file:", "mailto:", "a+b.c-d:", "1x:", "x y:"])
_USERINFO = st.sampled_from(["", "user@", "user:pw@", ":@", "a@b@", "User:P%41ss@"])
_HOSTS = st.sampled_from(
    ["", "Example.COM", "www.example.org.", "[::1]", "[fe80::1%eTh0]", "例子.cn", "%41", "ǅ"]
)
_PORTS = st.sampled_from(["", ":", ":80", ":0", ":65535", ":65536", ":99999", ":8a", ":-1", ":０"])
_RESTS = st.sampled_from(["", "/", "/a/B;sid=1", "?q=1&r=2", "#top", "#!/r?x", "/a?b#c?d", "//x"])
_STRUCTURED = st.tuples(
    _SCHEMES, st.sampled_from(["//", "", "/"]), _USERINFO, _HOSTS, _PORTS, _RESTS, _RESTS
).map("".join)
_MIXED = st.lists(
    st.one_of(_SCHEMES, _USERINFO, _HOSTS, _PORTS, _RESTS, st.sampled_from(_ODD_PIECES)),
    max_size=10,
).map("".join)


@given(st.one_of(_STRUCTURED, _MIXED))
@hypothesis.settings(max_examples=3000, deadline=None)
def test_any_mix_of_link_pieces_splits_as_urlsplit_splits_it(url: str) -> None:
    try:
        urlsplit(url)
    except ValueError as refused:
        with pytest.raises(ValueError, match=re.escape(str(refused))):
            split_link(url)
        return
    _same_as_urlsplit(url)


@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40))
@hypothesis.settings(max_examples=1000, deadline=None)
def test_any_ascii_text_splits_as_urlsplit_splits_it(text: str) -> None:
    url = "https://" + text
    try:
        urlsplit(url)
    except ValueError:
        return  # refused alike: test_a_link_urlsplit_refuses_is_refused_alike
    _same_as_urlsplit(url)
