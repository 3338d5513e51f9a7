"""The full-text index of the knowledge base's sections: tantivy, beside the SQLite file.

Chosen by measurement (bench/kb_real.py and the notes in docs/knowledge-base.md): at
130,000 sections an OR query of a question's words took a median of 73 ms in SQLite
FTS5 with `ORDER BY rank LIMIT`, which still scores every matching row, and 0.5 ms in
tantivy, whose block-max WAND skips the sections that cannot reach the top.

The index holds terms only (no stored text; the text lives once, in SQLite): three
fields per section, its title (the document title and the section's headings), its
prose and its code, as the terms `sleuth.kb.tokenize` made, with positions for
phrase credit, and the section's and document's ids. It lives in the folder
`<database>.tantivy` and is rebuilt from the stored text when it is missing or out of
step with the database (`store.prepare`).

Each section also carries its document's source name, tags and modified_at (seconds
since the epoch), indexed for filtering only: a search scoped to sources, tags or a
date (`Scope`) must match them, and they add nothing to the score, so the engine
still keeps only the best sections of those that match.

Searching is BM25 per field, summed over the query terms (`TITLE_WEIGHT`,
`TEXT_WEIGHT`, `CODE_WEIGHT`), plus `PHRASE_WEIGHT` of a phrase's BM25 for each pair
of adjacent query words found next to each other in a field, when the caller hands
the pairs to the query; a phrase clause is evaluated in every section that holds both
its words, so for a long question the same credit is added to the best sections
afterwards instead (`sleuth.kb.phrases`). Measured on the development questions,
the document title and headings in one field beat a field each, a title at half
weight beat a heavier one, and code in a field of its own beat code in the prose's
(docs/knowledge-base.md).
"""

from __future__ import annotations

import bisect
import json
import math
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tantivy

# A title is a few words, so BM25 already scores a match in it high: at half weight a
# title match still counts more than one in the text (1.0 and 2.0 ranked worse, in
# both languages; docs/knowledge-base.md).
TITLE_WEIGHT = 0.5
TEXT_WEIGHT = 1.0
# Code (fenced, indented, <pre>) is a field of its own at the same weight: its own
# length and statistics, so a long example no longer dilutes its section's prose, nor
# prose an example's terms (one more Chinese question first, one more English in
# the held-out half; 0.25 and 0.5 ranked no better; docs/knowledge-base.md).
CODE_WEIGHT = 1.0
# Phrase credit: about a tenth of a term's, as the sequential dependence model weighs
# ordered pairs (0.05 and 0.2 ranked no better on the development questions).
PHRASE_WEIGHT = 0.1
# An identifier in a heading (`functools.lru_cache(...)`, `pg_hba.conf`) names what the
# section defines; in prose it is a mention. Weighed like a title word (0.5), the
# What's New entry that mentions `gc.get_freeze_count()` beat the entry that defines
# it: on 300 Python library entries asked by their ids the entry's page came first
# for 0.76 of them; 0.93 at 2.0, 0.97 at 3.0, 0.98 from 4.0 on, with the development
# questions' figures unchanged at every weight (docs/knowledge-base.md).
IDENTIFIER_TITLE_WEIGHT = 4.0
_FIELDS = (("title", TITLE_WEIGHT), ("text", TEXT_WEIGHT), ("code", CODE_WEIGHT))
#: The fields a section's terms are searched in, by name.
FIELDS = tuple(name for name, _weight in _FIELDS)
# Indexes opened for searching, by folder, with the identity they were opened at.
_READERS: dict[Path, tuple[tuple[int, int, int], Any]] = {}
# Memory the writer may buffer before it writes a segment.
_WRITER_HEAP = 64_000_000


@dataclass(frozen=True)
class Tagged:
    """What a section is filtered on: its document's source, tags and date."""

    source: str = ""
    tags: tuple[str, ...] = ()
    modified: int = 0  # seconds since the epoch


@dataclass(frozen=True)
class Scope:
    """Which sections a search may return: from one of `sources`, carrying one of
    `tags`, modified at or after `since` (seconds since the epoch); empty: any."""

    sources: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    since: int | None = None


@dataclass(frozen=True)
class Match:
    section_id: int
    doc_id: int
    score: float


def index_dir(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".tantivy")


def _schema() -> Any:
    builder = tantivy.SchemaBuilder()
    for name, _weight in _FIELDS:
        builder.add_text_field(name, stored=False, tokenizer_name="whitespace")
    # Ids as fast (columnar) fields: read for a whole page of hits at once, nothing stored.
    builder.add_integer_field("section", stored=False, indexed=False, fast=True)
    builder.add_integer_field("doc", stored=False, indexed=True, fast=True)
    # Filters only (no positions): one term each, compared exactly.
    builder.add_text_field("source", stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("tags", stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_integer_field("modified", stored=False, indexed=True, fast=True)
    return builder.build()


def open_index(db_path: Path, *, create: bool) -> Any | None:
    """The index beside `db_path`; None when there is none, or one of another schema
    (an older sleuth's), and `create` is false. With `create`, an index of another
    schema is replaced by an empty one, which `store.prepare` then fills.

    For searching (`create` false) the opened index is kept and reused while its
    folder is the same one (opening costs about as much as a query's own search;
    `search` reloads it to see the latest commit)."""
    folder = index_dir(db_path)
    if not create:
        return _reader(folder)
    if not (folder / "meta.json").is_file():
        folder.mkdir(parents=True, exist_ok=True)
    try:
        return tantivy.Index(_schema(), path=str(folder), reuse=True)
    except ValueError:  # "An index exists but the schema does not match."
        remove_index(db_path)
        folder.mkdir(parents=True)
        return tantivy.Index(_schema(), path=str(folder), reuse=True)


def _reader(folder: Path) -> Any | None:
    try:
        # The folder's identity and its last commit: a rebuilt index (removed, created
        # again) is reopened, whatever inode numbers the new files happen to get.
        meta = (folder / "meta.json").stat()
        stamp = (folder.stat().st_ino, meta.st_ino, meta.st_mtime_ns)
    except OSError:
        return None
    cached = _READERS.get(folder)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        index = tantivy.Index(_schema(), path=str(folder), reuse=True)
    except ValueError:  # another schema: an older sleuth's, until the next `sleuth index`
        return None
    _READERS[folder] = (stamp, index)
    return index


def remove_index(db_path: Path) -> None:
    shutil.rmtree(index_dir(db_path), ignore_errors=True)


def count(index: Any) -> int:
    index.reload()
    return int(index.searcher().num_docs)


def section_ids(index: Any) -> set[int]:
    """Every section id the index holds (for checks; reads them all)."""
    index.reload()
    searcher = index.searcher()
    found = searcher.search(tantivy.Query.all_query(), max(1, searcher.num_docs))
    addresses = [address for _score, address in found.hits]
    return {int(value) for value in searcher.fast_field_values("section", addresses)}


class IndexBusy(RuntimeError):
    """Another indexer is writing to the same knowledge base."""


class Writer:
    """Adds and deletes sections; nothing is visible to searches before `commit`.
    Raises IndexBusy when another writer holds the index (tantivy allows one)."""

    def __init__(self, index: Any) -> None:
        self._changed = False
        try:
            self._writer = index.writer(heap_size=_WRITER_HEAP, num_threads=1)
        except ValueError as exc:
            if "LockBusy" not in str(exc):
                raise
            raise IndexBusy(
                "another indexer holds the full-text index's writer lock"
                " (.tantivy-writer.lock); wait for it to finish, then index again"
            ) from None

    def add(
        self,
        section_id: int,
        doc_id: int,
        page: str,
        title: str,
        body: str,
        code: str,
        *,
        scope: Tagged = Tagged(),
    ) -> None:
        """A section: its document's title, its headings, prose and code, each given as
        space-separated index terms (the first two are its title field),
        and what it is filtered on."""
        self._changed = True
        self._writer.add_document(_document(section_id, doc_id, page, title, body, code, scope))

    def delete_document(self, doc_id: int) -> None:
        self._changed = True
        self._writer.delete_documents_by_term("doc", doc_id)

    def clear(self) -> None:
        self._changed = True
        self._writer.delete_all_documents()

    def commit(self) -> None:
        """Make the changes since the last commit visible; nothing changed, nothing done
        (a commit costs about 0.1 s: a re-index of unchanged files did seven of them)."""
        if self._changed:
            self._writer.commit()
            self._changed = False

    def close(self) -> None:
        self.commit()
        self._writer.wait_merging_threads()


def _document(
    section_id: int, doc_id: int, page: str, title: str, body: str, code: str, scope: Tagged
) -> Any:
    # Field by field: the keyword constructor takes twice as long (4.0 against 2.4 us a
    # section, in the indexing process) for an equal document (a test compares them).
    document = tantivy.Document()
    add_integer, add_text = document.add_integer, document.add_text
    add_integer("section", section_id)
    add_integer("doc", doc_id)
    add_text("title", f"{page} {title}")
    add_text("text", body)
    add_text("code", code)
    add_text("source", scope.source)
    add_integer("modified", scope.modified)
    for tag in scope.tags:
        add_text("tags", tag)
    return document


def search(
    index: Any,
    terms: Sequence[str],
    limit: int,
    pairs: Sequence[tuple[str, str]] = (),
    scope: Scope = Scope(),
) -> list[Match]:
    """The `limit` best sections for the query `terms` within `scope`, best first; each
    of `pairs` found as a phrase in a field adds `PHRASE_WEIGHT` of its BM25 there."""
    if not terms or limit <= 0:
        return []
    index.reload()
    schema = index.schema
    clauses = [
        (tantivy.Occur.Should, _boosted(tantivy.Query.term_query(schema, name, term), weight))
        for term in terms
        for name, weight in _term_fields(term)
    ]
    clauses += [
        (
            tantivy.Occur.Should,
            _boosted(tantivy.Query.phrase_query(schema, name, list(pair)), PHRASE_WEIGHT),
        )
        for pair in pairs
        for name in FIELDS
    ]
    query = tantivy.Query.boolean_query(clauses)
    filters = _filters(schema, scope)
    if filters:
        # Must match the filters, which score nothing, and at least one query term.
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, query)]
            + [(tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0)) for f in filters]
        )
    return _matches(index.searcher(), query, limit)


def _term_fields(term: str) -> tuple[tuple[str, float], ...]:
    # Words and their stems never hold `.` or `_` (`tokenize` splits at them): only
    # a whole identifier does.
    if "." in term or "_" in term:
        return (("title", IDENTIFIER_TITLE_WEIGHT), *_FIELDS[1:])
    return _FIELDS


@dataclass(frozen=True)
class Statistics:
    """What BM25 weighs a match of some terms by, as the engine's own scoring does:
    each term's inverse document frequency in each field, by (field, term), and the
    average length of each field (in terms) where one of them is found."""

    idf: dict[tuple[str, str], float]
    average_length: dict[str, float]


def statistics(index: Any, terms: Sequence[str]) -> Statistics:
    """The `Statistics` of `terms` in the index as last searched."""
    searcher = index.searcher()
    total = searcher.num_docs
    idf = {}
    average_length = {}
    for name in FIELDS:
        present = None
        for term in terms:
            found = searcher.doc_freq(name, term)
            idf[name, term] = math.log(1 + (total - found + 0.5) / (found + 0.5))
            present = present or (term if found else None)
        if present is not None:
            average_length[name] = _average_length(searcher, index.schema, name, present)
    return Statistics(idf, average_length)


def _field_norms() -> list[int]:
    # tantivy keeps a field's length in one byte: exact to 40, then 8 steps of 2, 8 of
    # 4, 8 of 8, and so on (its FIELD_NORMS_TABLE), and BM25 uses the value kept.
    norms = list(range(41))
    step = 2
    while len(norms) < 256:
        norms += [norms[-1] + step * (i + 1) for i in range(8)]
        step *= 2
    return norms[:256]


_FIELD_NORMS = _field_norms()


def field_norm(length: int) -> int:
    """A field's length (in terms) as the engine keeps it, and BM25 weighs it."""
    return _FIELD_NORMS[bisect.bisect_right(_FIELD_NORMS, length) - 1]


def _average_length(searcher: Any, schema: Any, field: str, term: str) -> float:
    """The average length of `field`, which holds `term`: the bindings tell it only in
    the explanation of a score (it is the index's total of the field's terms over its
    sections, kept by every segment)."""
    query = tantivy.Query.term_query(schema, field, term)
    (_score, address), *_rest = searcher.search(query, 1).hits
    return _explained(json.loads(query.explain(searcher, address).to_json()), "avgdl")


def _explained(node: dict[str, Any], name: str) -> float:
    if str(node.get("description", "")).startswith(name):
        return float(node["value"])
    for detail in node.get("details", ()):
        value = _explained(detail, name)
        if value:
            return value
    return 0.0


def _filters(schema: Any, scope: Scope) -> list[Any]:
    filters = []
    if scope.sources:
        filters.append(tantivy.Query.term_set_query(schema, "source", list(scope.sources)))
    if scope.tags:
        filters.append(tantivy.Query.term_set_query(schema, "tags", list(scope.tags)))
    if scope.since is not None:
        filters.append(
            tantivy.Query.range_query(
                schema, "modified", tantivy.FieldType.Integer, lower_bound=scope.since
            )
        )
    return filters


def _matches(searcher: Any, query: Any, limit: int) -> list[Match]:
    hits = searcher.search(query, limit).hits
    addresses = [address for _score, address in hits]
    sections = searcher.fast_field_values("section", addresses)
    docs = searcher.fast_field_values("doc", addresses)
    return [
        Match(int(section), int(doc), float(score))
        for (score, _address), section, doc in zip(hits, sections, docs, strict=True)
    ]


def _boosted(query: Any, weight: float) -> Any:
    return query if weight == 1.0 else tantivy.Query.boost_query(query, weight)
