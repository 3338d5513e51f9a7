"""Bytes to text: what a page declares, checked against what it is."""

from sleuth.extract.charset import decode

_ZH = "北京地铁17号线北段今日开通，乘客可以从未来科学城北站直达天通苑东站。"


def test_the_header_wins_when_it_is_right() -> None:
    decoded = decode("Zürich".encode("cp1252"), "text/html; charset=windows-1252")
    assert decoded.text == "Zürich" and not decoded.mislabelled


def test_a_meta_charset_is_read_when_the_header_names_none() -> None:
    body = b'<html><head><meta charset="gbk"></head><body>' + _ZH.encode("gbk")
    decoded = decode(body, "text/html")
    assert _ZH in decoded.text and decoded.charset == "gb18030"


def test_a_header_that_cannot_decode_the_page_is_passed_over() -> None:
    decoded = decode(_ZH.encode("gb18030"), "text/html; charset=utf-8")
    assert decoded.text == _ZH and decoded.mislabelled


def test_undeclared_bytes_are_detected() -> None:
    decoded = decode(_ZH.encode("gb18030"), None)
    assert decoded.text == _ZH


def test_a_byte_order_mark_beats_every_label() -> None:
    decoded = decode("\ufeffcafé".encode(), "text/html; charset=iso-8859-1")
    assert decoded.text == "café"
