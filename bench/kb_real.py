"""The knowledge base on real documentation: speed, size and the right page first.

Run: PYTHONPATH=src .venv/bin/python bench/kb_real.py [--corpus DIR] [--scale DIR ...]
     [--copies N] [--no-bm25s] [--repeat N]

`--corpus` is the folder `make_corpus.sh` lays out (../shared/bench-data/kb-dev/, run
as root: `sudo make_corpus.sh /work/kb_corpus`): `en/` holds the PostgreSQL 15 HTML
documentation as installed, `zh/` the Chinese man pages rendered to text. Both are
indexed into one knowledge base, as a user would, and the labelled questions beside
the script are asked exactly as written: hit@1, hit@5 and MRR@10 per language, one
result per page (any expected page counts as a hit). Each question is asked twice:
as typed (what `kb.search` gets from a caller) and as the rewrite stage's keywords
(what the pipeline sent before the local provider took the whole question).
It also times an incremental re-index of a copy of `en/` after 1 % of its pages are
touched, 1 % changed and 1 % deleted, against the full build.

`--scale DIR` (repeatable) adds more real documentation to the same knowledge base
afterwards, e.g. /usr/share/doc/python3.11-doc/html (Debian's python3.11-doc), and
reports the latency again at that size; `--copies N` indexes the corpus that many
more times under other folder names to reach 100,000+ sections (the copies change
term statistics, so only latency and size are reported at that size).

bm25s (with the same Snowball stemmer and jieba) and tantivy as it comes (its
`en_stem` analyser, one field; Chinese cut by jieba first) rank the same stored
sections in the same run, best section per page, for comparison. Store query latency
is the time of `kb.search` (open, query, snippet), median and 99th percentile over
every question asked `--repeat` times, at about 1,000 files (the English pages
alone), the corpus, 10,000 files and the full size. Indexing runs as `sleuth index`
does (a process per CPU once 500 files need parsing); peak memory is this process's
largest resident set (bm25s's index included). Figures only: nothing is asserted.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import resource
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from sleuth import SearchRequest, Sleuth
from sleuth.kb import document_count, index_folder, search
from sleuth.kb.store import unpack
from sleuth.stages.query.rewrite import RewriteSettings, rewrite

QUESTIONS = Path(__file__).resolve().parents[2] / "shared/bench-data/kb-dev/questions.json"
Ranker = Callable[[str, int], list[str]]
_ID = re.compile(r"""\bid\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/kb_corpus"))
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--scale", type=Path, action="append", default=[])
    parser.add_argument("--copies", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-bm25s", action="store_true")
    args = parser.parse_args()
    if not (args.corpus / "en").is_dir():
        sys.exit(f"no corpus at {args.corpus}: run make_corpus.sh {args.corpus} as root first")
    questions = json.loads(args.questions.read_text(encoding="utf-8"))
    asked = [q["question"] for lang in ("en", "zh") for q in questions[lang]]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "kb.sqlite"
        for lang in ("en", "zh"):
            index_timed(db, args.corpus / lang, lang)
            if lang == "en":
                print_latency(db, asked, args.repeat, "sleuth")  # about 1,000 files
        print_size(db)
        print_anchors(db)
        rankers: dict[str, Ranker] = {
            "sleuth, as typed": lambda q, k: [r["path"] for r in search(db, q, k)],
            "sleuth, rewrite kw": lambda q, k: [r["path"] for r in search(db, _keywords(q), k)],
        }
        if not args.no_bm25s:
            rankers["bm25s, as typed"] = bm25s_ranker(db)
            rankers["tantivy, as typed"] = tantivy_ranker(db)
        for name, ranker in rankers.items():
            for lang in ("en", "zh"):
                print_quality(name, lang, questions[lang], ranker)
        print_confidence(db, questions, Path(tmp) / "state.sqlite")
        print_latency(db, asked, args.repeat, "sleuth")
        print_incremental(args.corpus / "en", Path(tmp) / "incremental")
        extra = list(args.scale)
        for copy in range(args.copies):
            for lang in ("en", "zh"):
                target = Path(tmp) / f"copy{copy}" / lang
                shutil.copytree(args.corpus / lang, target)
                extra.append(target)
        measured_10k = False
        for folder in extra:
            index_timed(db, folder, folder.name)
            if not measured_10k and document_count(db) >= 10_000:
                print_latency(db, asked, args.repeat, "sleuth")
                measured_10k = True
        if extra:
            print_size(db)
            print_latency(db, asked, args.repeat, "sleuth")
        print(f"peak memory (RSS) of this process: {peak_rss_mb():.0f} MB")


def index_timed(db: Path, folder: Path, name: str) -> None:
    started = time.perf_counter()
    report = index_folder(db, folder, workers=None)  # as `sleuth index` does
    elapsed = time.perf_counter() - started
    print(
        f"index {name}: {report.files} files in {elapsed:.1f} s "
        f"({report.files / elapsed:.0f} files/s), skipped {report.skipped}; "
        f"peak RSS so far {peak_rss_mb():.0f} MB"
    )


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def print_incremental(source: Path, work: Path) -> None:
    """A full build of a copy of `source`, then 1 % of its pages touched (same bytes,
    new mtime), 1 % changed and 1 % deleted, and the re-index: its time beside the
    full build's, and whether the index followed (the changed pages found by a word
    added to them, the deleted ones gone)."""
    folder = work / "docs"
    shutil.copytree(source, folder)
    db = work / "kb.sqlite"
    started = time.perf_counter()
    index_folder(db, folder, workers=None)
    full = time.perf_counter() - started
    pages = sorted(folder.glob("*.html"))
    step = max(1, len(pages) // max(1, len(pages) // 100))
    touched, changed, deleted = pages[0::step], pages[1::step], pages[2::step]
    for page in touched:
        page.touch()
    for page in changed:
        text = page.read_text(encoding="utf-8")
        page.write_text(text.replace("</body>", "<p>zyzzyvaword added.</p></body>"), "utf-8")
    for page in deleted:
        page.unlink()
    started = time.perf_counter()
    report = index_folder(db, folder, workers=None)
    again = time.perf_counter() - started
    found = {hit["path"] for hit in search(db, "zyzzyvaword", 50)}
    with closing(sqlite3.connect(db)) as conn:
        stored = {path for (path,) in conn.execute("SELECT rel_path FROM documents")}
    still = len(stored & {page.name for page in deleted})
    followed = len(found & {page.name for page in changed})
    print(
        f"re-index after {len(touched)} touched, {len(changed)} changed, {len(deleted)} deleted"
        f" of {len(pages)}: {again:.2f} s against {full:.1f} s full ({full / again:.0f} x);"
        f" {report.updated} updated, {report.removed} removed; changed pages found"
        f" {followed} of {len(changed)}, deleted pages still indexed {still}"
    )


def _keywords(question: str) -> str:
    return rewrite(question, [], RewriteSettings()).keywords


def print_size(db: Path) -> None:
    """The index on disk (SQLite and tantivy) against the text it holds, as UTF-8."""
    with closing(sqlite3.connect(db)) as conn:
        (sections,) = conn.execute("SELECT count(*) FROM sections").fetchone()
        text = sum(
            len(title.encode()) + len(unpack(body).encode()) + len(unpack(code).encode())
            for title, body, code in conn.execute("SELECT title, body, code FROM sections")
        )
    size = sum(path.stat().st_size for path in db.parent.iterdir() if path.is_file())
    size += sum(path.stat().st_size for path in db.parent.glob("*/*") if path.is_file())
    print(
        f"{sections} sections; text {text / 1e6:.1f} MB, index on disk {size / 1e6:.1f} MB "
        f"({size / text:.2f} x text)"
    )


def print_anchors(db: Path) -> None:
    """How many section links of HTML pages open an element the page really has."""
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT DISTINCT path, anchor FROM sections JOIN documents ON documents.id = doc_id"
            " WHERE anchor IS NOT NULL AND path LIKE '%.htm%'"
        ).fetchall()
    ids: dict[str, set[str]] = {}
    found = 0
    for path, anchor in rows:
        if path not in ids:
            page = Path(path).read_text(encoding="utf-8", errors="replace")
            ids[path] = {html.unescape(a or b) for a, b in _ID.findall(page)}
        found += anchor in ids[path]
    print(f"section anchors that exist in their page: {found} of {len(rows)}")


def print_quality(name: str, lang: str, questions: list[dict[str, object]], rank: Ranker) -> None:
    hit1 = hit5 = mrr = 0.0
    for question in questions:
        expected = set(question["expected"])  # type: ignore[call-overload]
        pages = rank(str(question["question"]), 10)
        place = next((i for i, page in enumerate(pages, 1) if page in expected), None)
        hit1 += place == 1
        hit5 += place is not None and place <= 5
        mrr += 1 / place if place else 0.0
    n = len(questions)
    print(f"{name:20} {lang}: hit@1 {hit1 / n:.2f}  hit@5 {hit5 / n:.2f}  MRR@10 {mrr / n:.3f}")


def print_confidence(db: Path, questions: dict[str, list[dict[str, Any]]], state: Path) -> None:
    """How well the answer's `confidence` tells a right first result from a wrong one:
    the whole pipeline over the local back end alone, AUROC per language (the chance
    that a right answer is more confident than a wrong one; ties count half)."""
    os.environ["SLEUTH_KB__PATH"], os.environ["SLEUTH_STORE__PATH"] = str(db), str(state)
    sleuth = Sleuth.from_config()
    for lang in ("en", "zh"):
        right: list[float] = []
        wrong: list[float] = []
        for question in questions[lang]:
            response = sleuth.search_sync(
                SearchRequest(
                    query=question["question"], providers=["local"], include=["url"], no_cache=True
                )
            )
            first = (response.results[0].url or "") if response.results else ""
            page = first.split("#")[0]
            hit = any(page.endswith("/" + expected) for expected in question["expected"])
            (right if hit else wrong).append(response.confidence or 0.0)
        pairs = [(r > w) + 0.5 * (r == w) for r in right for w in wrong]
        auroc = sum(pairs) / len(pairs) if pairs else float("nan")
        print(
            f"confidence {lang}: AUROC {auroc:.3f} ({len(right)} right first results,"
            f" {len(wrong)} wrong; pipeline, local only)"
        )


def print_latency(db: Path, asked: list[str], repeat: int, name: str) -> None:
    with closing(sqlite3.connect(db)) as conn:
        (files,) = conn.execute("SELECT count(*) FROM documents").fetchone()
        (sections,) = conn.execute("SELECT count(*) FROM sections").fetchone()
    times = []
    for _ in range(repeat):
        for question in asked:
            started = time.perf_counter()
            search(db, question, 10)
            times.append((time.perf_counter() - started) * 1000)
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(
        f"{name} store query at {files:,} files, {sections:,} sections:"
        f" p50 {statistics.median(times):.1f} ms, p99 {p99:.1f} ms"
    )


def bm25s_ranker(db: Path) -> Ranker:
    """bm25s over the sections the knowledge base stored, best section per page."""
    import bm25s
    import Stemmer

    from sleuth.kb.tokenize import segment

    stemmer = Stemmer.Stemmer("english")
    with closing(sqlite3.connect(db)) as conn:
        rows = [
            (path, page, title, unpack(body), unpack(code))
            for path, page, title, body, code in conn.execute(
                "SELECT rel_path, documents.title, sections.title, body, code FROM sections"
                " JOIN documents ON documents.id = sections.doc_id"
            )
        ]
    pages = [row[0] for row in rows]

    def tokens(text: str) -> list[str]:
        return stemmer.stemWords(segment(text).split())

    started = time.perf_counter()
    corpus = [tokens(" ".join(row[1:])) for row in rows]
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    print(f"bm25s index: {len(rows)} sections in {time.perf_counter() - started:.1f} s")

    def rank(question: str, k: int) -> list[str]:
        query = [word for word in tokens(question) if word.isalnum() or len(word) > 1]
        docs, _scores = retriever.retrieve([query], k=min(len(rows), 50 * k), show_progress=False)
        seen: list[str] = []
        for index in docs[0]:
            page = pages[int(index)]
            if page not in seen:
                seen.append(page)
        return seen[:k]

    return rank


def tantivy_ranker(db: Path) -> Ranker:
    """tantivy as it comes (its `en_stem` analyser, BM25, one field), over the same
    sections, Chinese cut by jieba beforehand, best section per page."""
    import tantivy

    from sleuth.kb.tokenize import segment

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", tokenizer_name="en_stem")
    builder.add_integer_field("row", stored=False, indexed=False, fast=True)
    index = tantivy.Index(builder.build())  # in memory
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT rel_path, documents.title, sections.title, body, code FROM sections"
            " JOIN documents ON documents.id = sections.doc_id"
        ).fetchall()
    pages = [row[0] for row in rows]
    started = time.perf_counter()
    writer = index.writer(heap_size=200_000_000, num_threads=1)
    for number, (_path, page, title, body, code) in enumerate(rows):
        text = segment(f"{page} {title} {unpack(body)} {unpack(code)}")
        writer.add_document(tantivy.Document(text=text, row=number))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    print(f"tantivy index: {len(rows)} sections in {time.perf_counter() - started:.1f} s")
    searcher = index.searcher()

    def rank(question: str, k: int) -> list[str]:
        words = re.sub(r"[^\w\s]", " ", segment(question))
        query, _errors = index.parse_query_lenient(words, ["text"])
        hits = searcher.search(query, 50 * k).hits
        numbers = searcher.fast_field_values("row", [address for _score, address in hits])
        seen: list[str] = []
        for number in numbers:
            page = pages[int(number)]
            if page not in seen:
                seen.append(page)
        return seen[:k]

    return rank


if __name__ == "__main__":
    main()
