"""The knowledge base on real documentation: speed, size and the right page first.

Run: PYTHONPATH=src .venv/bin/python bench/kb_real.py [--corpus DIR] [--scale DIR ...]
     [--copies N] [--no-bm25s] [--repeat N]

`--corpus` is the folder `make_corpus.sh` lays out (../shared/bench-data/kb-dev/, run
as root: `sudo make_corpus.sh ../kb_corpus`, the default): `en/` holds the PostgreSQL 15 HTML
documentation as installed, `zh/` the Chinese man pages rendered to text. Both are
indexed into one knowledge base, as a user would, and the labelled questions beside
the script are asked exactly as written: hit@1, hit@5 and MRR@10 per language, one
result per page (any expected page counts as a hit). Each question is asked twice:
as typed (what `kb.search` gets from a caller) and as the rewrite stage's keywords
(what the pipeline sent before the local provider took the whole question).
It also times an incremental re-index of a copy of `en/` after 1 % of its pages are
touched, 1 % changed and 1 % deleted, against the full build.

The terms of PostgreSQL's back-of-book index (`bookindex.html`) that point at one
page are asked too, 400 of them: the documentation's own words, labelled by its
authors, many more lookups than questions.

`--api-docs DIR` (default: Debian's python3.11-doc, when installed) is a known-item
check on documentation the questions do not cover: 300 API entries of the Python
library reference drawn at random, asked by their ids. For these, the book index's
terms, the first 150 of the Node.js names and 150 of the Rust items below, the whole
pipeline's summary is read too: how often it opens on the right page, and how often
it is empty.

`--node-docs DIR` (default: Debian's nodejs-doc, /usr/share/doc/nodejs/api, when
installed) asks 300 of its API names (`fs.readFile`) by name, the pages indexed as
installed, with `all.html`, which holds every page again: a whole-book page must not
come first in the place of the page it copies.

`--rust-docs DIR` (default: Debian's rust-doc, /usr/share/doc/rust-doc/html/std, when
installed) asks the standard library's structs, enums, traits, macros and functions by
name, the pages indexed as rustdoc writes them.

`--man-pages DIR` (default: /usr/share/man/zh_CN, when manpages-zh is installed) asks
the Chinese questions again of the man pages as installed, their roff source
compressed, in a knowledge base of their own beside one of the rendered `zh/` pages:
the same pages read from their source should rank as their rendered text does.

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
alone), the corpus, 10,000 files and the full size, with the slowest 1 % of the
queries named. Indexing runs as `sleuth index` does, in a fresh process (a process per
CPU once 500 files need parsing), its CPU counted with its workers'; peak memory is
this process's largest resident set (bm25s's index included). Figures only: nothing
is asserted.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import random
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from _common import KB_CORPUS
from sleuth import SearchRequest, Sleuth
from sleuth.kb import document_count, index_folder, search
from sleuth.kb.store import unpack
from sleuth.stages.query.rewrite import RewriteSettings, rewrite

QUESTIONS = Path(__file__).resolve().parents[2] / "shared/bench-data/kb-dev/questions.json"
PYTHON_DOCS = Path("/usr/share/doc/python3.11-doc/html")  # Debian's python3.11-doc
ZH_MAN_PAGES = Path("/usr/share/man/zh_CN")  # Debian's manpages-zh, as installed
NODE_DOCS = Path("/usr/share/doc/nodejs/api")  # Debian's nodejs-doc
RUST_DOCS = Path("/usr/share/doc/rust-doc/html/std")  # Debian's rust-doc
_NODE_API_NAME = re.compile(r"<h[34]>(?:<code>)?([a-zA-Z_]\w*(?:\.\w+)+)\(")
_API_ENTRY = re.compile(r'<dt class="sig sig-object py" id="([^"]+)"')
_INDEX_ENTRY = re.compile(r'<dt id="ientry-[^"]+">(.*?)</dt>')
_INDEX_LINK = re.compile(r'href="([^"#]+)')
_TAG = re.compile(r"<[^>]+>")
Ranker = Callable[[str, int], list[str]]
_ID = re.compile(r"""\b(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=KB_CORPUS)
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--scale", type=Path, action="append", default=[])
    parser.add_argument("--copies", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-bm25s", action="store_true")
    parser.add_argument("--api-docs", type=Path, default=PYTHON_DOCS)
    parser.add_argument("--man-pages", type=Path, default=ZH_MAN_PAGES)
    parser.add_argument("--node-docs", type=Path, default=NODE_DOCS)
    parser.add_argument("--rust-docs", type=Path, default=RUST_DOCS)
    args = parser.parse_args()
    if not (args.corpus / "en").is_dir():
        sys.exit(f"no corpus at {args.corpus}: run make_corpus.sh {args.corpus} as root first")
    questions = json.loads(args.questions.read_text(encoding="utf-8"))
    asked = [q["question"] for lang in ("en", "zh") for q in questions[lang]]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "kb.sqlite"
        for lang in ("en", "zh"):
            index_timed(db, args.corpus / lang, lang)
            print_cpu_per_file(args.corpus / lang, lang)
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
        state = Path(tmp) / "state.sqlite"
        confidences = {}
        for lang in ("en", "zh"):
            lookups = [(q["question"], q["expected"]) for q in questions[lang]]
            answers = pipeline_answers(db, state, lookups)
            print_summaries(lang, questions[lang], answers)
            confidences[lang] = confidence_outcomes(answers)
        book_index = args.corpus / "en" / "bookindex.html"
        if book_index.is_file():
            terms = book_index_terms(book_index)
            for name, ranker in rankers.items():
                print_lookup(f"index terms, {name}", terms, ranker, "en/")
            lookups = [(term, [page]) for term, page in terms]
            answers = pipeline_answers(db, state, lookups)
            print_lookup_summaries("book index", answers)
            confidences["book index"] = confidence_outcomes(answers)
        print_latency(db, asked, args.repeat, "sleuth")
        print_incremental(args.corpus / "en", Path(tmp) / "incremental")
        if (args.api_docs / "library").is_dir():
            api = Path(tmp) / "api.sqlite"
            drawn = print_api_lookup(args.api_docs, api, not args.no_bm25s)
            lookups = [(entry, [page]) for entry, page in drawn]
            api_state = Path(tmp) / "api-state.sqlite"
            answers = pipeline_answers(api, api_state, lookups)
            print_lookup_summaries("API by id", answers)
            confidences["API"] = confidence_outcomes(answers)
        print_confidence(confidences)
        if (args.node_docs / "all.html").is_file():
            node = Path(tmp) / "node.sqlite"
            drawn = print_node_lookup(args.node_docs, node)
            lookups = [(name, [page]) for name, page in drawn[:150]]
            answers = pipeline_answers(node, Path(tmp) / "node-state.sqlite", lookups)
            print_lookup_summaries("Node.js names", answers)
        if (args.rust_docs / "index.html").is_file():
            rust = Path(tmp) / "rust.sqlite"
            named = random.Random(3).sample(print_rust_lookup(args.rust_docs, rust), 150)
            lookups = [(name, [page]) for name, page in named]
            answers = pipeline_answers(rust, Path(tmp) / "rust-state.sqlite", lookups)
            print_lookup_summaries("Rust std items", answers)
        if shutil.which("dpkg") and args.man_pages.is_dir():
            print_installed_man_pages(args.man_pages, args.corpus / "zh", questions["zh"], tmp)
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
    """Index `folder` as `sleuth index` does: in a fresh process (whose parse workers
    are forked from it, a process per CPU once 500 files need parsing), timed there.
    CPU is that process's and its workers', user and system; the cores it kept busy are
    that CPU over the wall time (at most the machine's, less what other programs took)."""
    run = fresh_index(db, folder)
    print(
        f"index {name}: {run['files']} files in {run['wall']:.1f} s "
        f"({run['files'] / run['wall']:.0f} files/s), CPU {run['cpu']:.1f} s with the workers"
        f" ({1000 * run['cpu'] / max(1, run['files']):.2f} ms a file,"
        f" {run['cpu'] / run['wall']:.2f} cores), the first file stored after"
        f" {run['first_stored']:.2f} s, skipped {run['skipped']};"
        f" the indexer's peak RSS {run['rss_mb']:.0f} MB"
    )


def fresh_index(db: Path, folder: Path) -> dict[str, Any]:
    """`index_folder(db, folder, workers=None)` run and timed in a fresh process."""
    # `-c`, not standard input: a fork server's workers import the main module again,
    # which a script read from standard input cannot be.
    done = subprocess.run(  # noqa: S603 - this bench's own script
        [sys.executable, "-c", _INDEXER],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "KB_REAL_DB": str(db), "KB_REAL_FOLDER": str(folder)},
    )
    return dict(json.loads(done.stdout))


_INDEXER = """
import json, os, resource, time
from multiprocessing import forkserver
from pathlib import Path
from sleuth.kb import index_folder

def cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime

def stored(done, total, path):  # called after each file is stored
    if done == 1:
        first.append(time.perf_counter() - started)

first = []
before = cpu(resource.RUSAGE_SELF)  # the imports are not indexing
started = time.perf_counter()
report = index_folder(
    Path(os.environ["KB_REAL_DB"]), Path(os.environ["KB_REAL_FOLDER"]), workers=None,
    progress=stored,
)
wall = time.perf_counter() - started
if forkserver._forkserver._forkserver_pid is not None:
    # Workers from a fork server are its children: stopped (it reaps them first), it
    # hands their CPU time on to this process's children's.
    time.sleep(0.2)
    forkserver._forkserver._stop()
print(json.dumps({
    "files": report.files, "skipped": report.skipped, "updated": report.updated,
    "removed": report.removed, "wall": wall, "first_stored": first[0] if first else wall,
    "cpu": cpu(resource.RUSAGE_SELF) - before + cpu(resource.RUSAGE_CHILDREN),
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def print_cpu_per_file(folder: Path, name: str) -> None:
    """CPU time per file of indexing `folder` in one process (parsing, tokenising,
    storing and the full-text writer's thread): what a core spends on a file, which,
    unlike files/s, does not depend on what else the machine runs."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.process_time()
        report = index_folder(Path(tmp) / "kb.sqlite", folder, workers=1)
        spent = time.process_time() - started
    print(
        f"index {name}, one process: {1000 * spent / report.files:.2f} ms of CPU a file"
        f" (at most {report.files / spent:.0f} files/s a core)"
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
    full = fresh_index(db, folder)["wall"]
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
    report = fresh_index(db, folder)
    again = report["wall"]
    found = {hit["path"] for hit in search(db, "zyzzyvaword", 50)}
    with closing(sqlite3.connect(db)) as conn:
        stored = {path for (path,) in conn.execute("SELECT rel_path FROM documents")}
    still = len(stored & {page.name for page in deleted})
    followed = len(found & {page.name for page in changed})
    print(
        f"re-index after {len(touched)} touched, {len(changed)} changed, {len(deleted)} deleted"
        f" of {len(pages)}: {again:.2f} s against {full:.1f} s full ({full / again:.0f} x);"
        f" {report['updated']} updated, {report['removed']} removed; changed pages found"
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
    """How many section links of HTML pages open an element the page really has, and
    how many open at their section: a browser goes to the first element with the id
    (`_opens_at`)."""
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT DISTINCT path, anchor, heading FROM sections"
            " JOIN documents ON documents.id = doc_id"
            " WHERE anchor IS NOT NULL AND path LIKE '%.htm%'"
        ).fetchall()
    ids: dict[str, set[str]] = {}
    at_section = 0
    tree = LexborHTMLParser("")
    for path, anchor, heading in sorted(rows):  # a page at a time: one parsed tree held
        if path not in ids:
            page = Path(path).read_text(encoding="utf-8", errors="replace")
            ids[path] = {html.unescape(a or b) for a, b in _ID.findall(page)}
            tree = LexborHTMLParser(page)
        at_section += _opens_at(tree, anchor, heading or "")
    links = {(path, anchor) for path, anchor, _ in rows}
    found = sum(anchor in ids[path] for path, anchor in links)
    print(
        f"section anchors that exist in their page: {found} of {len(links)};"
        f" sections whose link opens at the section: {at_section} of {len(rows)}"
    )


_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6", "dt")


def _opens_at(tree: LexborHTMLParser, anchor: str, heading: str) -> bool:
    """Whether the first element with the id `anchor` is the heading `heading`, is
    inside it, holds it (the section it opens, or the element around a heading that
    has no id of its own) or is an empty anchor just before it; headings are compared
    by their first words, as the reader drops ¶ marks, an API entry's also by the
    tails of its dotted id."""
    quoted = anchor.replace("\\", "\\\\").replace('"', '\\"')
    first = tree.css_first(f'[id="{quoted}"]') or tree.css_first(f'a[name="{quoted}"]')
    if first is None:
        return False
    written = " ".join(heading.split())
    # An API entry's heading names it by its id (`inspect.Signature.bind(*args)`) where
    # the page may write a tail of it (`bind(*args)`): each is the same heading.
    parts = anchor.split(".")
    forms = [written] + [
        written.replace(anchor, ".".join(parts[start:]), 1)
        for start in range(1, len(parts))
        if anchor in written
    ]
    openings = tuple(form[:30] for form in forms)

    def same(node: Any) -> bool:
        return " ".join(node.text().split()).startswith(openings)

    node: Any = first
    while node is not None and node.tag != "html":
        if node.tag in _HEADING_TAGS:
            return same(node)
        node = node.parent
    if any(same(inner) for inner in first.css(", ".join(_HEADING_TAGS))):
        return True
    # An empty anchor just before the heading (`<a name="…"></a><h2>`, man2html's).
    after = _next_in_page(first) if not first.text().strip(" \t\n\xa0") else None
    return after is not None and after.tag in _HEADING_TAGS and same(after)


def _next_in_page(node: Any) -> Any:
    """The first node after `node` and its contents in the page, blank text and
    comments passed over."""
    while node is not None:
        while node is not None and node.next is None:
            node = node.parent
        node = node.next if node is not None else None
        if node is not None and not (
            node.tag == "-comment" or (node.tag == "-text" and not node.text().strip())
        ):
            return node
    return None


def print_quality(name: str, lang: str, questions: list[dict[str, object]], rank: Ranker) -> None:
    """hit@1, hit@5 and MRR@10 over all the questions, then over each half: the odd
    ids (the half ranking changes were tuned on) and the even ids (held out)."""
    places = []
    for question in questions:
        expected = set(question["expected"])  # type: ignore[call-overload]
        pages = rank(str(question["question"]), 10)
        places.append(next((i for i, page in enumerate(pages, 1) if page in expected), None))
    odd = [int(str(q["id"]).rsplit("-", 1)[1]) % 2 == 1 for q in questions]
    halves = [
        ("all", places),
        ("tuned", [p for p, o in zip(places, odd, strict=True) if o]),
        ("held out", [p for p, o in zip(places, odd, strict=True) if not o]),
    ]
    figures = []
    for label, group in halves:
        n = len(group) or 1
        hit1 = sum(place == 1 for place in group) / n
        hit5 = sum(place is not None and place <= 5 for place in group) / n
        mrr = sum(1 / place for place in group if place) / n
        figures.append(f"{label} {hit1:.2f} / {hit5:.2f} / {mrr:.3f}")
    print(f"{name:20} {lang}: hit@1 / hit@5 / MRR@10: " + "; ".join(figures))


def print_installed_man_pages(
    installed: Path, rendered: Path, questions: list[dict[str, object]], tmp: str
) -> None:
    """The questions asked of the man pages `make_corpus.sh` renders (manpages-zh's, not
    the aliases), read from their `.gz` roff source as installed, and of the rendered
    pages, each in a knowledge base of its own."""
    listed = subprocess.run(
        ["dpkg", "-L", "manpages-zh"],  # noqa: S607 - the package's file list, from PATH
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    source = Path(tmp) / "man-source"
    for name in listed:
        path = Path(name)
        if path.suffix == ".gz" and path.parent.parent == installed and not path.is_symlink():
            (source / path.parent.name).mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, source / path.parent.name / path.name)
    for label, folder, suffix in (("rendered", rendered, ".txt"), ("source", source, ".gz")):
        db = Path(tmp) / f"man-{label}.sqlite"
        files = index_folder(db, folder).files
        asked = [
            {**q, "expected": [str(e).removesuffix(".txt") + suffix for e in expected]}
            for q in questions
            for expected in [q["expected"]]
            if isinstance(expected, list)
        ]
        print_quality(f"man pages, {label} ({files} files)", "zh", asked, _paths_of(db))


def _paths_of(db: Path) -> Ranker:
    return lambda question, k: [hit["path"] for hit in search(db, question, k)]


def book_index_terms(page: Path, sample: int = 400) -> list[tuple[str, str]]:
    """A fixed random sample of a DocBook back-of-book index's terms (PostgreSQL's
    `bookindex.html`) that point at one page and are phrases, not names: ("warm
    standby", "high-availability.html"). The documentation's authors chose the page
    each term is about, so they are labelled lookups of the documentation's own
    words, hundreds of them, beside the questions' paraphrases."""
    entries = []
    for found in _INDEX_ENTRY.finditer(page.read_text(encoding="utf-8")):
        entry = found.group(1)
        pages = set(_INDEX_LINK.findall(entry))
        term = html.unescape(_TAG.sub("", entry.split("<a", 1)[0])).strip().rstrip(",").strip()
        if len(pages) == 1 and len(term.split()) >= 2 and "(" not in term:
            entries.append((term, pages.pop()))
    return random.Random(14).sample(entries, min(sample, len(entries)))


def print_lookup(name: str, lookups: list[tuple[str, str]], rank: Ranker, prefix: str) -> None:
    """hit@1, hit@5 and MRR@10 of known-item lookups: (query, the page it is about)."""
    places = []
    for query, page in lookups:
        pages = [got.removeprefix(prefix) for got in rank(query, 10)]
        places.append(next((i for i, got in enumerate(pages, 1) if got == page), None))
    n = len(places) or 1
    hit1 = sum(place == 1 for place in places) / n
    hit5 = sum(place is not None and place <= 5 for place in places) / n
    mrr = sum(1 / place for place in places if place) / n
    figures = f"{hit1:.2f} / {hit5:.2f} / {mrr:.3f}"
    print(f"{name:32}: {len(places)} lookups, hit@1 / hit@5 / MRR@10 {figures}")


def print_api_lookup(
    docs: Path, db: Path, baselines: bool, sample: int = 300
) -> list[tuple[str, str]]:
    """Known-item lookup on other documentation than the questions': the Python
    library reference's API entries (`<dt id="functools.lru_cache">`), a fixed random
    sample asked by their ids, then those whose last part has an underscore by that
    part alone (`lru_cache`). A hit is the entry's page (hit@1, hit@5) and, for sleuth,
    which links to sections, the entry itself as the first result. Returns the
    drawn entries, (id, page)."""
    index_timed(db, docs, docs.name)
    entries = [
        (found.group(1), f"library/{page.name}")
        for page in sorted((docs / "library").glob("*.html"))
        for found in _API_ENTRY.finditer(page.read_text(encoding="utf-8"))
    ]
    drawn = random.Random(14).sample(entries, min(sample, len(entries)))
    asked = {
        "by id": [(entry, page, entry) for entry, page in drawn],
        "by last part": [
            (entry.rsplit(".", 1)[-1], page, entry)
            for entry, page in drawn
            if "_" in entry.rsplit(".", 1)[-1].strip("_")
        ],
    }
    # sleuth's answers once: their pages rank, their first link tells the entry
    answers = {query: search(db, query, 5) for group in asked.values() for query, *_ in group}
    rankers: dict[str, Ranker] = {"sleuth": lambda q, k: [r["path"] for r in answers[q][:k]]}
    if baselines:
        rankers["bm25s"] = bm25s_ranker(db)
        rankers["tantivy"] = tantivy_ranker(db)
    for how, queries in asked.items():
        for name, rank in rankers.items():
            found = [(rank(query, 5), page) for query, page, _entry in queries]
            hit1 = sum(bool(got) and got[0] == page for got, page in found)
            hit5 = sum(page in got for got, page in found)
            line = (
                f"API lookup {how:13} {name:8}: {len(queries)} entries, page hit@1"
                f" {hit1 / len(queries):.2f} hit@5 {hit5 / len(queries):.2f}"
            )
            if name == "sleuth":
                first = sum(
                    bool(answers[query]) and answers[query][0]["url"].endswith("#" + entry)
                    for query, _page, entry in queries
                )
                line += f", the entry itself first {first / len(queries):.2f}"
            print(line)
    return drawn


def print_node_lookup(docs: Path, db: Path, sample: int = 300) -> list[tuple[str, str]]:
    """Node.js API names (`fs.readFile`) asked by name, drawn at random from the
    headings of each module's page: a hit is that page; `all.html` holds them all.
    Returns the drawn names, (name, page)."""
    index_timed(db, docs, docs.name)
    names = [
        (found.group(1), page.name)
        for page in sorted(docs.glob("*.html"))
        if page.name not in ("all.html", "index.html")
        for found in _NODE_API_NAME.finditer(page.read_text(encoding="utf-8"))
    ]
    drawn = random.Random(5).sample(names, min(sample, len(names)))
    firsts = [[hit["path"] for hit in search(db, name, 5)] for name, _page in drawn]
    hit1 = sum(bool(got) and got[0] == page for got, (_, page) in zip(firsts, drawn, strict=True))
    hit5 = sum(page in got for got, (_, page) in zip(firsts, drawn, strict=True))
    book = sum(bool(got) and got[0] == "all.html" for got in firsts)
    print(
        f"Node.js API names, sleuth: {len(drawn)} asked by name, page hit@1"
        f" {hit1 / len(drawn):.2f} hit@5 {hit5 / len(drawn):.2f}, all.html first {book}"
    )
    return drawn


_RUSTDOC_ITEM = re.compile(r"^(struct|enum|trait|macro|fn)\.(\w+)\.html$")


def print_rust_lookup(docs: Path, db: Path) -> list[tuple[str, str]]:
    """The standard library's items asked by name (`HashMap`, `BufRead`, `vec`), as
    rustdoc lays them out (`collections/hash_map/struct.HashMap.html`): each name one
    page of its kind has (a name of two, `Iter`, or a redirect stub, is left out); a
    hit is that page, per kind. The pages are indexed as installed. Returns the names
    asked, (name, page), kind after kind."""
    index_timed(db, docs, docs.name)
    pages: dict[tuple[str, str], list[str]] = {}
    for page in sorted(docs.rglob("*.html")):
        item = _RUSTDOC_ITEM.match(page.name)
        if item and "Redirecting to" not in page.read_text(encoding="utf-8")[:2000]:
            pages.setdefault((item.group(1), item.group(2)), []).append(
                page.relative_to(docs).as_posix()
            )
    figures = []
    asked: list[tuple[str, str]] = []
    for kind in ("struct", "enum", "trait", "macro", "fn"):
        names = [
            (name, found[0]) for (k, name), found in pages.items() if k == kind and len(found) == 1
        ]
        asked += names
        got = [[hit["path"] for hit in search(db, name, 5)] for name, _page in names]
        hit1 = sum(bool(g) and g[0] == page for g, (_, page) in zip(got, names, strict=True))
        hit5 = sum(page in g for g, (_, page) in zip(got, names, strict=True))
        n = len(names) or 1
        figures.append(f"{kind} {len(names)}: {hit1 / n:.2f} / {hit5 / n:.2f}")
    print("Rust std items by name, sleuth, hit@1 / hit@5: " + "; ".join(figures))
    return asked


Outcome = tuple[float, bool]  # an answer's confidence, and whether its first page is right


@dataclass(frozen=True)
class Answer:
    """The whole pipeline's answer to one lookup, as a caller reads it."""

    confidence: float
    first_right: bool  # the first result is on a right page
    cited_right: tuple[bool, ...]  # each summary sentence's source is on a right page
    summary: str


def pipeline_answers(db: Path, state: Path, lookups: list[tuple[str, list[str]]]) -> list[Answer]:
    """Each lookup (query, its right pages) asked of the whole pipeline over the local
    back end alone."""
    os.environ["SLEUTH_KB__PATH"], os.environ["SLEUTH_STORE__PATH"] = str(db), str(state)
    sleuth = Sleuth.from_config()
    answers = []
    for query, pages in lookups:
        response = sleuth.search_sync(
            SearchRequest(query=query, providers=["local"], include=["url"], no_cache=True)
        )

        urls = [(item.url or "").split("#")[0] for item in response.results]
        answers.append(
            Answer(
                response.confidence or 0.0,
                bool(urls) and _on(urls[0], pages),
                tuple(_on(urls[c.result], pages) for s in response.summary for c in s.citations),
                " ".join(s.text for s in response.summary),
            )
        )
    return answers


def _on(page: str, pages: list[str]) -> bool:
    return any(page.endswith("/" + expected) for expected in pages)


def confidence_outcomes(answers: list[Answer]) -> list[Outcome]:
    return [(answer.confidence, answer.first_right) for answer in answers]


def print_summaries(lang: str, questions: list[dict[str, Any]], answers: list[Answer]) -> None:
    """What the summary quotes: how often its first sentence, and how many of its
    sentences, come from a right page (beside how often the first result is one), and,
    for the questions labelled with the key facts of a right answer (`answer`), the
    share of that answer's content words (Snowball stems, function words aside) the
    summary holds: a proxy for "the summary answers the question", over each half."""
    import Stemmer

    from sleuth.kb.tokenize import STOP_WORDS

    stemmer = Stemmer.Stemmer("english")

    def words(text: str) -> set[str]:
        found = re.findall(r"[a-z0-9_]+", text.lower())
        return {stemmer.stemWord(w) for w in found if w not in STOP_WORDS and len(w) > 1}

    odd = [int(str(q["id"]).rsplit("-", 1)[1]) % 2 == 1 for q in questions]
    figures = []
    for label, keep in (("all", None), ("tuned", True), ("held out", False)):
        chosen = [a for a, o in zip(answers, odd, strict=True) if keep in (None, o)]
        n = len(chosen) or 1
        first = sum(a.first_right for a in chosen) / n
        opening = sum(bool(a.cited_right) and a.cited_right[0] for a in chosen) / n
        cited = [right for a in chosen for right in a.cited_right]
        recalls = [
            len(words(str(q["answer"])) & words(a.summary)) / len(words(str(q["answer"])))
            for q, a, o in zip(questions, answers, odd, strict=True)
            if q.get("answer") and keep in (None, o)
        ]
        recall = (
            f", answer words {statistics.mean(recalls):.2f} ({len(recalls)})" if recalls else ""
        )
        figures.append(
            f"{label} first result {first:.2f}, summary opens with it {opening:.2f},"
            f" sentences {sum(cited)}/{len(cited)}{recall}"
        )
    print(f"summaries {lang} (pipeline, local only), right page: " + "; ".join(figures))


def print_lookup_summaries(name: str, answers: list[Answer]) -> None:
    """For lookups of one right page each: how often the summary opens on it, beside
    how often the first result is it, and how many summaries are empty."""
    first = sum(answer.first_right for answer in answers)
    opening = sum(bool(a.cited_right) and a.cited_right[0] for a in answers)
    empty = sum(not answer.summary for answer in answers)
    print(
        f"summaries {name} (pipeline, local only): {len(answers)} lookups, first result"
        f" right {first}, summary opens on a right page {opening}, empty {empty}"
    )


def print_confidence(outcomes: dict[str, list[Outcome]]) -> None:
    """How well `confidence` tells a right first result from a wrong one, per set and
    over all of them: AUROC (the chance that a right answer is more confident than a
    wrong one; ties count half), and how often the first result is right among the
    answers of confidence 0.7 or more, and of less than 0.4. The knowledge base's
    confidence was fitted on the book-index terms: the other sets are held out."""
    pooled = [outcome for group in outcomes.values() for outcome in group]
    for name, group in [*outcomes.items(), ("all", pooled)]:
        right = [value for value, hit in group if hit]
        wrong = [value for value, hit in group if not hit]
        pairs = [(r > w) + 0.5 * (r == w) for r in right for w in wrong]
        auroc = sum(pairs) / len(pairs) if pairs else float("nan")
        print(
            f"confidence {name:12}: AUROC {auroc:.3f} ({len(right)} right first results,"
            f" {len(wrong)} wrong); right when >= 0.7 {_share_right(group, 0.7, 1.01)},"
            f" when < 0.4 {_share_right(group, 0.0, 0.4)} (pipeline, local only)"
        )


def _share_right(group: list[Outcome], low: float, high: float) -> str:
    hits = [hit for value, hit in group if low <= value < high]
    return f"{sum(hits)} of {len(hits)}" + (f" ({sum(hits) / len(hits):.2f})" if hits else "")


def print_latency(db: Path, asked: list[str], repeat: int, name: str) -> None:
    """Store query latency, then the slowest 1 % of the queries (at least two) with
    their time, to tell a costly kind of query from a busy machine."""
    with closing(sqlite3.connect(db)) as conn:
        (files,) = conn.execute("SELECT count(*) FROM documents").fetchone()
        (sections,) = conn.execute("SELECT count(*) FROM sections").fetchone()
    timed = []
    for _ in range(repeat):
        for question in asked:
            started = time.perf_counter()
            search(db, question, 10)
            timed.append(((time.perf_counter() - started) * 1000, question))
    times = sorted(ms for ms, _question in timed)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(
        f"{name} store query at {files:,} files, {sections:,} sections:"
        f" p50 {statistics.median(times):.1f} ms, p99 {p99:.1f} ms"
    )
    slowest = sorted(timed, reverse=True)[: max(2, len(timed) // 100)]
    print("  slowest: " + "; ".join(f"{ms:.0f} ms {question[:48]!r}" for ms, question in slowest))


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
