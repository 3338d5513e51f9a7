"""Write the benign training rows taken from documentation Debian ships.

`tests/data/safety/train/documentation_headings.jsonl` and `documentation_sentences.jsonl`
hold real text nobody wrote for training: section headings, and the first one or two
sentences of sections' prose, drawn at random from manuals that no measure reads (the
knowledge-base bench reads PostgreSQL's, Python's, Rust's std, Node.js's and the Chinese
man pages). Each folder is indexed into a scratch knowledge base, as `sleuth index`
cuts it, and the rows are drawn from its sections.

    apt-get install sqlite3-doc git-doc python-django-doc sphinx-doc python-flask-doc \\
        python-requests-doc docutils-doc debian-reference-zh-cn maint-guide-zh-cn
    python scripts/documentation_training_rows.py
"""

from __future__ import annotations

import json
import random
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

from sleuth.kb import index_folder
from sleuth.kb.store import unpack
from sleuth.text import language_of, sentence_spans

TRAIN = Path(__file__).parents[1] / "tests" / "data" / "safety" / "train"
DOCS = Path("/usr/share/doc")
# Package, folder under /usr/share/doc; the Chinese ones give all they have up to a cap.
SOURCES = {
    "sqlite3-doc": "sqlite3-doc",
    "git-doc": "git-doc",
    "python-django-doc": "python-django-doc/html",
    "sphinx-doc": "sphinx-doc/html",
    "python-flask-doc": "python-flask-doc/html",
    "python-requests-doc": "python-requests-doc/html",
    "docutils-doc": "docutils-doc",
    "debian-reference-zh-cn": "debian-reference-zh-cn",
    "maint-guide-zh-cn": "maint-guide-zh-cn",
}
HEADINGS = {"seed": 20261206, "english": 80, "chinese": 150}
SENTENCES = {"seed": 20261207, "english": 70, "chinese": 120}
END = ".。!?！？"


def sections(db: Path) -> list[tuple[str | None, str]]:
    with closing(sqlite3.connect(db)) as conn:
        return [
            (heading, unpack(body))
            for heading, body in conn.execute("SELECT heading, body FROM sections")
        ]


def headings_of(found: list[tuple[str | None, str]]) -> list[str]:
    return sorted(
        {heading.strip() for heading, _ in found if heading and 3 <= len(heading.strip()) <= 200}
    )


def sentences_of(found: list[tuple[str | None, str]], rng: random.Random) -> list[str]:
    """The first one or two sentences (one, two thirds of the time) of each section's
    first paragraph, 20 to 300 characters, ending a sentence, without code."""
    taken = []
    for _, body in found:
        paragraph = body.split("\n\n", 1)[0].strip()
        spans = sentence_spans(paragraph)
        if not spans or "\ufffc" in paragraph:
            continue
        count = rng.choice((1, 1, 2))
        text = " ".join(paragraph[spans[0][0] : spans[min(count, len(spans)) - 1][1]].split())
        if 20 <= len(text) <= 300 and text[-1] in END:
            taken.append(text)
    return sorted(set(taken))


def row(text: str, note: str) -> str:
    lang = "zh" if language_of(text) == "zh" else "en"
    fields = {"query": " ".join(text.split()), "label": "benign", "lang": lang, "note": note}
    return json.dumps(fields, ensure_ascii=False) + "\n"


def main() -> None:
    # A fixed draw, to be written again the same: no secret hangs on it.
    heading_rng = random.Random(HEADINGS["seed"])  # noqa: S311
    sentence_rng = random.Random(SENTENCES["seed"])  # noqa: S311
    headings: list[str] = []
    sentences: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, folder in SOURCES.items():
            source = DOCS / folder
            if not source.is_dir():
                raise SystemExit(f"{source} is missing: apt-get install {name}")
            db = Path(tmp) / f"{name}.sqlite"
            index_folder(db, source)
            found = sections(db)
            chinese = name.endswith("zh-cn")
            key = "chinese" if chinese else "english"
            pool = headings_of(found)
            drawn = heading_rng.sample(pool, min(len(pool), HEADINGS[key]))
            headings += [row(text, f"documentation heading ({name})") for text in drawn]
            pool = sentences_of(found, sentence_rng)
            drawn = sentence_rng.sample(pool, min(len(pool), SENTENCES[key]))
            sentences += [row(text, f"documentation sentence ({name})") for text in drawn]
    (TRAIN / "documentation_headings.jsonl").write_text("".join(headings), encoding="utf-8")
    (TRAIN / "documentation_sentences.jsonl").write_text("".join(sentences), encoding="utf-8")
    print(f"{len(headings)} headings, {len(sentences)} sentences")


if __name__ == "__main__":
    main()
