"""Files in the encodings people's documents are still written in: indexed as their
text (found by their words, shown as written), while bytes that are no text stay out."""

from __future__ import annotations

import random
from pathlib import Path

from sleuth.kb import index_folder, search
from sleuth.kb.rows import decoded

_ZH = "缓存策略决定了搜索结果保存多久，过期以后由后台任务重新抓取并刷新索引。"


def _indexed(tmp_path: Path, files: dict[str, bytes]) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    for name, data in files.items():
        (root / name).write_bytes(data)
    db = tmp_path / "kb.db"
    report = index_folder(db, root)
    assert report.not_text == ()
    assert report.added == len(files)
    return db


def test_a_chinese_note_saved_as_gbk_is_found_by_its_words(tmp_path: Path) -> None:
    db = _indexed(tmp_path, {"缓存.txt": f"缓存策略\n\n{_ZH}\n".encode("gbk")})
    (hit,) = search(db, "缓存策略 过期", 5)
    assert hit["path"] == "缓存.txt"
    assert "后台任务重新抓取" in hit["snippet"]


def test_a_latin_1_readme_keeps_its_accented_letters(tmp_path: Path) -> None:
    text = "Café configuration\n\nThe naïve resolver in Zürich caches every answer.\n"
    db = _indexed(tmp_path, {"README": text.encode("latin-1")})
    (hit,) = search(db, "resolver Zürich", 5)
    assert "naïve resolver in Zürich" in hit["snippet"]


def test_a_utf_16_file_with_its_byte_order_mark_is_read(tmp_path: Path) -> None:
    text = "Meeting notes\n\nThe deploy window moves to Thursday.\n"
    db = _indexed(tmp_path, {"notes.txt": text.encode("utf-16")})  # BOM first
    (hit,) = search(db, "deploy window", 5)
    assert hit["snippet"].startswith("The deploy window moves to Thursday")


def test_an_html_page_is_read_in_the_charset_it_declares(tmp_path: Path) -> None:
    page = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312">'
        f"<title>索引刷新</title></head><body><h1>索引刷新</h1><p>{_ZH}</p></body></html>"
    )
    db = _indexed(tmp_path, {"refresh.html": page.encode("gb2312")})
    (hit,) = search(db, "刷新索引", 5)
    assert hit["title"].startswith("索引刷新")
    assert "后台任务" in hit["snippet"]


def test_random_bytes_without_a_nul_are_not_text() -> None:
    rng = random.Random(7)  # noqa: S311 - repeatable test bytes, not a secret
    for _ in range(50):
        data = bytes(b for b in rng.randbytes(rng.randint(64, 8000)) if b)
        assert decoded(data) is None


def test_utf_8_bytes_are_handed_on_as_they_are() -> None:
    data = "Größe 大小".encode()
    read = decoded(data)
    assert read is not None
    assert read[0] == "Größe 大小" and read[1] is data
