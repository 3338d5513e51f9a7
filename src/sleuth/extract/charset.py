"""Bytes of a page to text: a byte-order mark, then the Content-Type header, then a
`<meta>` charset in the first 4 KB, then detection (charset-normalizer, `detected`).

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

__all__ = ["Decoded", "declared_charset", "decode", "detected", "meta_charset", "strictly"]

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
# How much of a body detection reads: enough to tell, bounded for a large one.
_DETECT_BYTES = 200_000
# The multi-byte East Asian codecs charset-normalizer may guess (Python's names).
_EAST_ASIAN = frozenset(
    {"gb18030", "gb2312", "gbk", "hz", "big5", "big5hkscs", "cp950", "shift_jis"}
    | {"shift_jis_2004", "shift_jisx0213", "cp932", "euc_jp", "euc_jis_2004", "euc_kr"}
    | {"cp949", "johab", "iso2022_jp", "iso2022_kr"}
)
# Fewer characters than this in a guessed East Asian text, with no word of the
# language recognised, are a Latin-1 file's few accented letters read in pairs (an
# AUTHORS file's "Müller" as one Chinese character): in Debian's documentation such
# files held 1 to 7 non-ASCII bytes, the shortest Chinese man page 56 characters.
_EAST_ASIAN_MIN_CHARS = 16
# Languages written in Latin letters, which Windows-1252 (a superset of Latin-1's
# printable characters) covers; charset-normalizer names one of several code pages
# that decode such a text (cp850, cp775, cp1250), mostly not the one it was written in.
_WESTERN_LANGUAGES = frozenset(
    {"English", "German", "French", "Spanish", "Portuguese", "Italian", "Dutch"}
    | {"Swedish", "Danish", "Norwegian", "Finnish", "Indonesian", "Catalan", "Latin Based"}
)


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


def strictly(body: bytes, codec: str) -> str | None:
    """`body` decoded in `codec`, or None when it is not valid there (or no such codec)."""
    try:
        return body.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def meta_charset(body: bytes) -> str | None:
    """The codec a page's `<meta>` charset (in its first 4 KB) names, if Python knows it."""
    meta = _META_CHARSET.search(body[:4096])
    return _codec(meta.group(1).decode("ascii", errors="replace") if meta else None)


def detected(body: bytes) -> str | None:
    """The codec `body` reads as text in, by detection, or None when it reads as none
    (random bytes, most binary files).

    A text in Latin letters reads as Windows-1252, and an East Asian guess counts only
    when charset-normalizer recognised the language or it gives enough characters
    (measured on Debian's documentation re-encoded: 703 Chinese man pages as GB18030,
    702 read back exactly; 300 English files as Latin-1, 296; 300 random byte strings
    without a NUL, none taken for text).

    >>> detected("缓存策略决定了结果保存多久，以及过期以后如何刷新。".encode("gb18030"))
    'gb18030'
    >>> detected("Copyright (C) 2009 J\u00fcrgen M\u00fcller".encode("latin-1"))
    'cp1252'
    """
    best = from_bytes(body[:_DETECT_BYTES]).best()
    if best is None:
        return None
    codec = _codec(best.encoding)
    if codec in _EAST_ASIAN:
        if best.coherence > 0 or _non_ascii(str(best)) >= _EAST_ASIAN_MIN_CHARS:
            return codec
    elif best.language not in _WESTERN_LANGUAGES and best.coherence > 0:
        return codec
    return "cp1252" if strictly(body, "cp1252") is not None else "latin-1"


def _non_ascii(text: str) -> int:
    return len(text) - len(text.encode("ascii", errors="ignore"))


def decode(body: bytes, content_type: str | None) -> Decoded:
    """The text of `body`, and the charset that read it."""
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return Decoded(body.decode(codec, errors="replace").lstrip("\ufeff"), codec)
    declared = [_codec(declared_charset(content_type)), meta_charset(body)]
    mislabelled = False
    for codec in filter(None, declared):
        text = strictly(body, codec)
        if text is None:
            mislabelled = True
            continue
        if codec in _WESTERN and not text.isascii():
            as_utf8 = strictly(body, "utf-8")
            if as_utf8 is not None:
                return Decoded(as_utf8, "utf-8", mislabelled=True)
        return Decoded(text, codec, mislabelled)
    if body.isascii():
        return Decoded(body.decode("ascii"), "ascii", mislabelled)
    as_utf8 = strictly(body, "utf-8")
    if as_utf8 is not None:
        return Decoded(as_utf8, "utf-8", mislabelled)
    codec = detected(body) or "utf-8"
    return Decoded(body.decode(codec, errors="replace"), codec, mislabelled)
