"""Helpers for the page-reading tests: a small PDF with a real text layer, the
recorded article pages, and a `Sleuth` whose egress lets it reach only the loopback
test server (every other private address is refused, as in production).

A helper module, not a test module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sleuth import Sleuth
from sleuth.config import load_settings
from sleuth.egress import EgressSettings
from sleuth.extract.settings import ExtractSettings
from sleuth.store import MemoryStore

DATA = Path(__file__).resolve().parents[1] / "data" / "extract"
ARTICLE = (DATA / "article.html").read_bytes()
ARTICLE_ZH_GB2312 = (DATA / "article_zh.gb2312.html").read_bytes()


def pdf_bytes(lines: list[str], title: str = "Timetable notes") -> bytes:
    """A one-page PDF 1.4 whose text layer holds `lines` (Helvetica, ASCII), with a
    document title and creation date, laid out as PDF writers do (objects, xref)."""
    escaped = [line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for line in lines]
    stream = "BT /F1 12 Tf 72 720 Td 14 TL " + " ".join(f"({t}) '" for t in escaped) + " ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        "/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
        f"<< /Title ({title}) /CreationDate (D:20250301120000Z) >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info 6 0 R >>\n"
        f"startxref\n{xref}\n%%EOF\n"
    ).encode()
    return bytes(out)


def loopback_sleuth(**extract: Any) -> Sleuth:
    """A `Sleuth` that may fetch from 127.0.0.1 only, with `extract` settings."""
    settings = load_settings(
        egress=EgressSettings(allow_private=["127.0.0.1"]), extract=ExtractSettings(**extract)
    )
    return Sleuth(settings, store=MemoryStore())
