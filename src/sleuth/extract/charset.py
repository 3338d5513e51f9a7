"""Bytes of a page to text: a byte-order mark, then the Content-Type header, then a
`<meta>` charset in the first 4 KB, then detection (charset-normalizer).

A declared charset that cannot decode the bytes is passed over for the next source,
and so is a declared single-byte Western charset (latin-1, windows-1252, ascii) when
the bytes are valid UTF-8 with multi-byte characters in them: servers that label
every page latin-1 are common, a latin-1 page that happens to be valid UTF-8 is not.
Either way `Decoded.mislabelled` says so.

>>> decode("caf\\u00e9".encode(), "text/html; charset=iso-8859-1")
Decoded(text='café', charset='utf-8', mislabelled=True)
>>> decode("北京今天天气晴朗，最高气温二十五度，适合散步。".encode("gb18030"), None).charset
'gb18030'
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from charset_normalizer import from_bytes

__all__ = ["Decoded", "declared_charset", "decode"]

_HEADER_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.IGNORECASE)
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([\w.:-]+)", re.IGNORECASE)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_WESTERN = frozenset({"latin-1", "iso8859-1", "cp1252", "ascii"})
# Chinese pages labelled gb2312 use characters only its superset has.
_SUPERSETS = {"gb2312": "gb18030", "gbk": "gb18030"}


@dataclass(frozen=True)
class Decoded:
    text: str
    charset: str
    mislabelled: bool = False


def declared_charset(content_type: str | None) -> str | None:
    match = _HEADER_CHARSET.search(content_type or "")
    return match.group(1) if match else None


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        found = codecs.lookup(name).name
    except LookupError:
        return None
    return _SUPERSETS.get(found, found)


def _strict(body: bytes, codec: str) -> str | None:
    try:
        return body.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def decode(body: bytes, content_type: str | None) -> Decoded:
    """The text of `body`, and the charset that read it."""
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return Decoded(body.decode(codec, errors="replace").lstrip("\ufeff"), codec)
    meta = _META_CHARSET.search(body[:4096])
    declared = [
        _codec(declared_charset(content_type)),
        _codec(meta.group(1).decode() if meta else None),
    ]
    mislabelled = False
    for codec in filter(None, declared):
        text = _strict(body, codec)
        if text is None:
            mislabelled = True
            continue
        if codec in _WESTERN and not text.isascii():
            as_utf8 = _strict(body, "utf-8")
            if as_utf8 is not None:
                return Decoded(as_utf8, "utf-8", mislabelled=True)
        return Decoded(text, codec, mislabelled)
    if body.isascii():
        return Decoded(body.decode("ascii"), "ascii", mislabelled)
    as_utf8 = _strict(body, "utf-8")
    if as_utf8 is not None:
        return Decoded(as_utf8, "utf-8", mislabelled)
    best = from_bytes(body[:200_000]).best()
    detected = (_codec(best.encoding) if best is not None else None) or "utf-8"
    return Decoded(body.decode(detected, errors="replace"), detected, mislabelled)
