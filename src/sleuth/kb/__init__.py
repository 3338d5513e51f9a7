"""The local knowledge base: a folder of notes indexed by section, the text in SQLite
and the terms in a tantivy index beside it, searched with BM25, one result per file
at its best section.

    from sleuth.kb import index_folder, search

    report = index_folder(Path("kb.db"), Path("~/notes").expanduser())
    hits = search(Path("kb.db"), "缓存策略", limit=5)  # [{"url": "file:///…#anchor", …}]

Modules: `extract` (a file's title, sections and date), `html` (pages as
published: content, real anchors, API entries), `manpage` (man pages rendered to
text), `pdf` and `word` (PDF and .docx), `unreadable` (their one error), `sections`
(cutting at headings, anchors, chunks), `tokenize` (index terms: jieba or trigrams,
stems, function words), `rows` (a file as the rows stored, run by worker processes),
`parsing` (those workers, forked when that is safe), `sources` (named sources: folder
tag rules, schedules), `engine` (the tantivy index),
`store` (schema, connections, keeping the two in
step), `ignore` (.gitignore rules), `index` (incremental indexing), `search`
(ranking), `passage` (the snippet). Only `index`, `ignore`, `search`, `store` and
`engine` touch the file system and the databases.

The names below are imported on first use (`sleuth.lazy_names`), so the settings
(which read `sources`) do not import the indexer. `search` is the exception: the
function shares its module's name, which an import of the module would otherwise
set on this package.
"""

from __future__ import annotations

import typing

from sleuth import lazy_names
from sleuth.kb.search import NotSearchable, document_count, search

if typing.TYPE_CHECKING:
    from sleuth.kb.engine import IndexBusy
    from sleuth.kb.index import (
        IndexReport,
        index_folder,
        index_source,
        last_indexed,
        prune_sources,
        readable_file,
    )
    from sleuth.kb.sources import SourceConfig, due_sources
    from sleuth.kb.tokenize import Tokenizer

__all__ = [
    "IndexBusy",
    "IndexReport",
    "NotSearchable",
    "SourceConfig",
    "Tokenizer",
    "document_count",
    "due_sources",
    "index_folder",
    "index_source",
    "last_indexed",
    "prune_sources",
    "readable_file",
    "search",
]

_HOMES = {
    "IndexBusy": "sleuth.kb.engine",
    "IndexReport": "sleuth.kb.index",
    "index_folder": "sleuth.kb.index",
    "index_source": "sleuth.kb.index",
    "last_indexed": "sleuth.kb.index",
    "prune_sources": "sleuth.kb.index",
    "readable_file": "sleuth.kb.index",
    "SourceConfig": "sleuth.kb.sources",
    "due_sources": "sleuth.kb.sources",
    "Tokenizer": "sleuth.kb.tokenize",
}


__getattr__, __dir__ = lazy_names.hooks(__name__, _HOMES)
