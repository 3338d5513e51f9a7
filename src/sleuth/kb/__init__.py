"""The local knowledge base: a folder of notes indexed by section into SQLite FTS5,
searched with BM25, one result per file at its best section.

    from sleuth.kb import index_folder, search

    report = index_folder(Path("kb.db"), Path("~/notes").expanduser())
    hits = search(Path("kb.db"), "缓存策略", limit=5)  # [{"url": "file:///…#anchor", …}]

Modules: `extract` (a file's title, sections and date), `sections` (cutting at
headings, anchors, chunks), `tokenize` (jieba and trigram index forms, safe MATCH
expressions), `store` (schema, connections), `index` (incremental indexing),
`search` (ranking), `passage` (the snippet). Only `index` and `search` touch the
file system and the database.
"""

from sleuth.kb.index import IndexReport, index_folder
from sleuth.kb.search import document_count, search
from sleuth.kb.tokenize import Tokenizer

__all__ = ["IndexReport", "Tokenizer", "document_count", "index_folder", "search"]
