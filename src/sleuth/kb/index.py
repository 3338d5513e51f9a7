"""Indexing a folder into the knowledge base, incrementally and by section.

Every supported file under the root is hashed, except what is excluded: hidden files
and folders, the folders in `DEFAULT_EXCLUDE` (generated copies and assets such as
Sphinx's `_sources/`, dependencies, caches) and whatever matches the caller's
`exclude` globs. A glob without a `/` is matched against every file and folder name
(`*.min.html`, `drafts`), one with a `/` against the path from the root
(`api/v1/*`). A text, Markdown, PDF or Word file beside an HTML page of the same
name (git's `git-branch.txt` beside `git-branch.html`, bash's `bashref.pdf` beside
`bashref.html`) is that page in another form: only the page is indexed. A file that
is not text (it holds NUL bytes, or is not valid UTF-8), or a PDF or Word document
that cannot be read, is skipped and named in the report; an earlier entry of it is
removed. `.gitignore` files are followed as git does (`sleuth.kb.ignore`). Otherwise
a file whose sha256 matches the stored one is left alone (unless an older reading,
`rows.READER_VERSION`, cut it), a changed one re-indexed (all its sections
replaced), and a file indexed earlier under this root but gone
from disk is removed with its sections. Several roots can share one database:
documents are keyed by absolute path, and removal only looks under the root being
indexed.

Each section of a file (`sleuth.kb.sections`; a long one in chunks of about
`CHUNK_CHARS`) is a row of the full-text index, with the document title and the
section's headings as fields of their own, so it is ranked on its own.

Asking for another tokenizer than the database was built with rebuilds the whole
full-text index (every root) from the stored text, then indexes as usual.
"""

from __future__ import annotations

import fcntl
import fnmatch
import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from sleuth.kb import engine
from sleuth.kb.engine import IndexBusy
from sleuth.kb.extract import GZIP_SUFFIX, kind_of
from sleuth.kb.ignore import GitIgnores
from sleuth.kb.parsing import Parser, batches, cpus
from sleuth.kb.rows import READER_VERSION, FileRows
from sleuth.kb.sources import SourceConfig, merged_tags, rule_tags
from sleuth.kb.store import (
    add_stored,
    connect,
    prepare,
    record_source_run,
    source_runs,
    stored_tokenizer,
    timestamp,
)
from sleuth.kb.tokenize import TOKENIZERS, Tokenizer

Progress = Callable[[int, int, Path], None]
Outcome = Literal["added", "updated", "unchanged", "skipped", "not_text"]

#: Folders never indexed, wherever they are: copies of the sources and assets that
#: documentation generators write beside the pages, dependencies, build caches.
DEFAULT_EXCLUDE = (
    "_sources",
    "_static",
    "_images",
    "_downloads",
    "node_modules",
    "__pycache__",
    "site-packages",
    "bower_components",
)

# A file of these kinds beside an HTML page of the same name is that page in another
# form: its source, or the same document printed.
_PAGE_EXTENSIONS = frozenset({"html", "htm"})
_OTHER_FORMS = frozenset({"txt", "md", "markdown", "pdf", "docx"})

# Commit every so many files, so an interrupted run on a large folder keeps its work.
_COMMIT_EVERY = 1000
#: Files parsed here before worker processes parse the rest, on a re-index (a first
#: build starts them at once): starting a fork server (when this process runs other
#: threads) costs as much as parsing several hundred files.
PARALLEL_FROM = 500


@dataclass(frozen=True)
class IndexReport:
    """What one `index_folder` run did. `files` is how many supported files it saw;
    `skipped` counts those it could not read (their earlier entry, if any, is kept)
    or that are not text; `not_text` names the latter (paths from the root)."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    files: int = 0
    skipped: int = 0
    not_text: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Known:
    id: int
    sha256: str
    root: str
    source: str = ""
    own_tags: str = ""
    tags: str = ""
    parsed_by: str = ""


@dataclass(frozen=True)
class _Place:
    """Where the files of one run belong: the folder their paths are relative to, the
    source they are indexed through and its folder rules."""

    root: Path
    source: str
    tag_rules: dict[str, Sequence[str]]

    def tags(self, rel_path: str, own: Sequence[str]) -> str:
        return " ".join(merged_tags(own, rule_tags(rel_path, self.tag_rules)))


def index_folder(
    db_path: Path,
    root: Path,
    *,
    tokenizer: Tokenizer = "jieba",
    progress: Progress | None = None,
    exclude: Sequence[str] = (),
    workers: int | None = 1,
    source: str = "",
    tag_rules: Mapping[str, Sequence[str]] | None = None,
) -> IndexReport:
    """Index the Markdown, text, HTML, PDF and Word files under `root` (a folder, or
    one file) into the database at `db_path`.

    The documents carry `source` (a name from `kb.sources`; '' for none) and the tags
    of their front matter and of `tag_rules` (glob -> tags, `sleuth.kb.sources`); a
    file already indexed and unchanged that now has another source or other tags is
    given them without being read again.

    `progress(done, total, path)` is called after each file. With `workers` above 1
    (None: one per CPU, as `sleuth index` does), that many processes parse the files
    once `PARALLEL_FROM` needed parsing (`sleuth.kb.parsing`: forked from this process
    when it runs no other thread; else, like any multiprocessing pool, they import the
    caller's main module, so a script that asks for them keeps its own work under
    `if __name__ == "__main__":`). Raises FileNotFoundError when `root` does not exist,
    NotADirectoryError when it is neither a folder nor a file, and IndexBusy, before
    changing anything, when another indexer is writing to the same database (it holds
    `<database>.lock`).
    """
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZERS)}, not {tokenizer!r}")
    given = root.resolve()
    if not given.exists():
        raise FileNotFoundError(f"does not exist: {given}")
    if given.is_dir():
        root, files = given, sorted(files_to_index(given, (*DEFAULT_EXCLUDE, *exclude)))
    elif readable_file(given):
        root, files = given.parent, [given]
    else:
        raise NotADirectoryError(f"neither a folder nor a file sleuth reads: {given}")
    place = _Place(root, source, dict(tag_rules or {}))
    db_path.parent.mkdir(parents=True, exist_ok=True)
    counts = dict.fromkeys(("added", "updated", "unchanged", "skipped"), 0)
    not_text: list[str] = []
    with _only_writer(db_path), closing(connect(db_path)) as conn, ExitStack() as stack:
        count = cpus() if workers is None else workers
        parser: Parser[list[_Read]] = Parser(tokenizer, count, stack, PARALLEL_FROM)
        # Files never indexed must all be parsed: when they alone are enough, the
        # workers start at once, before the full-text index is opened (`parsing`).
        indexed = _indexed_under(conn, given)
        new = sum(str(path) not in indexed for path in files)
        if new >= PARALLEL_FROM:
            parser.start()
        writer = engine.Writer(prepare(conn, db_path, tokenizer))
        known = _known_under(conn, given)
        reads = (_read(root, path, known.pop(str(path), None)) for path in files)
        parsed = _parsed(reads, parser, new if new >= PARALLEL_FROM else 0)
        for done, (read, rows) in enumerate(parsed, start=1):
            outcome = _store(conn, writer, place, read, rows, tokenizer)
            if outcome == "not_text":
                not_text.append(read.path.relative_to(root).as_posix())
                if read.known is not None:  # removed below with the files that are gone
                    known[str(read.path)] = read.known
                outcome = "skipped"
            counts[outcome] += 1
            if done % _COMMIT_EVERY == 0:
                _commit(conn, writer)
            if progress is not None:
                progress(done, len(files), read.path)
        # What is left in `known` was indexed under this root and is no longer on disk.
        gone = [entry.id for entry in known.values()]
        _remove(conn, writer, gone)
        writer.close()
    return IndexReport(removed=len(gone), files=len(files), not_text=tuple(not_text), **counts)


def index_source(
    db_path: Path,
    name: str,
    source: SourceConfig,
    *,
    tokenizer: Tokenizer = "jieba",
    progress: Progress | None = None,
    exclude: Sequence[str] = (),
    workers: int | None = 1,
    now: datetime | None = None,
) -> IndexReport:
    """Index every path of the named source (`index_folder` with its name, folder rules
    and excludes), then record the run for `due_sources`. Raises FileNotFoundError,
    before indexing anything, when one of its paths does not exist."""
    for path in source.paths:
        if not path.exists():
            raise FileNotFoundError(f"kb.sources.{name}.paths: {path} does not exist")
    reports = [
        index_folder(
            db_path,
            path,
            tokenizer=tokenizer,
            progress=progress,
            exclude=[*exclude, *source.exclude],
            workers=workers,
            source=name,
            tag_rules=source.tags,
        )
        for path in source.paths
    ]
    # What the source indexed under paths it no longer has is no longer its own.
    moved = remove_documents(db_path, source=name, keep_under=source.paths)
    with closing(connect(db_path)) as conn:
        record_source_run(conn, name, now or datetime.now(UTC))
        conn.commit()
    total = {
        counted: sum(getattr(report, counted) for report in reports)
        for counted in ("added", "updated", "unchanged", "removed", "files", "skipped")
    }
    total["removed"] += moved
    return IndexReport(
        **total, not_text=tuple(item for report in reports for item in report.not_text)
    )


def remove_documents(db_path: Path, *, source: str, keep_under: Sequence[Path] = ()) -> int:
    """Remove the documents indexed through the source named `source` that lie under
    none of `keep_under` (all of them when it is empty), with their sections; returns
    how many. Raises IndexBusy when another indexer is writing."""
    if not source or not db_path.is_file():
        return 0
    kept = [path.resolve() for path in keep_under]
    with _only_writer(db_path), closing(connect(db_path)) as conn:
        tokenizer = stored_tokenizer(conn)
        if tokenizer is None:  # nothing indexed, or by another version: the next run rebuilds
            return 0
        rows = conn.execute("SELECT id, path FROM documents WHERE source = ?", (source,))
        gone = [doc_id for doc_id, path in rows if not _inside(Path(path), kept)]
        if gone:
            writer = engine.Writer(prepare(conn, db_path, tokenizer))
            _remove(conn, writer, gone)
            writer.close()
    return len(gone)


def prune_sources(db_path: Path, configured: Sequence[str]) -> dict[str, int]:
    """Remove the documents of every source that is no longer in `configured` (the
    names in kb.sources); documents indexed by path (no source) stay. Returns how many
    each such source had."""
    if not db_path.is_file():
        return {}
    with closing(connect(db_path)) as conn:
        if stored_tokenizer(conn) is None:
            return {}
        names = [name for (name,) in conn.execute("SELECT DISTINCT source FROM documents")]
    wanted = {name.lower() for name in configured}
    dropped = [name for name in names if name and name not in wanted]
    return {name: remove_documents(db_path, source=name) for name in dropped}


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def last_indexed(db_path: Path) -> dict[str, datetime]:
    """When each named source was last indexed (none for a missing knowledge base)."""
    if not db_path.is_file():
        return {}
    with closing(connect(db_path)) as conn:
        return source_runs(conn)


def readable_file(path: Path) -> bool:
    """Whether `path` is a file of a kind the knowledge base reads (by its suffix)."""
    return path.is_file() and kind_of(path) is not None


@dataclass(frozen=True)
class _Read:
    """A file as read: its bytes when they need parsing, else what happened."""

    path: Path
    known: _Known | None
    digest: str = ""
    outcome: Outcome | None = None  # "unchanged" or "skipped": nothing to parse
    data: bytes = b""
    mtime: float = 0.0


def _read(root: Path, path: Path, known: _Known | None) -> _Read:
    try:
        data = path.read_bytes()
        mtime = path.stat().st_mtime
    except OSError:
        return _Read(path, known, outcome="skipped")
    digest = hashlib.sha256(data).hexdigest()
    if known is not None and known.sha256 == digest and known.parsed_by == READER_VERSION:
        return _Read(path, known, digest, "unchanged")
    return _Read(path, known, digest, None, data, mtime)


def _parsed(
    reads: Iterator[_Read], parser: Parser[list[_Read]], to_parse: int
) -> Iterator[tuple[_Read, FileRows | None]]:
    """Each read with its rows (None when it needed no parsing), in order."""
    items = (
        (batch, [(read.path, read.data, read.mtime) for read in batch if read.outcome is None])
        for batch in batches(reads)
    )
    for batch, results in parser.parsed(items, to_parse):
        rows = iter(results)
        for read in batch:
            yield read, (next(rows) if read.outcome is None else None)


@contextmanager
def _only_writer(db_path: Path) -> Iterator[None]:
    """Hold `<database>.lock` while indexing: a second indexer would wait on SQLite's
    lock between commits and then fail on the full-text index's, half-way through."""
    lock = db_path.with_name(db_path.name + ".lock")
    with lock.open("a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise IndexBusy(
                f"another `sleuth index` is writing to the knowledge base {db_path}"
                f" ({holder} holds {lock.name}); wait for it to finish, then run this again"
            ) from None
        handle.truncate(0)
        handle.write(f"process {os.getpid()}")
        handle.flush()
        yield  # the lock goes with the file's closing, however the run ends


def _remove(conn: sqlite3.Connection, writer: engine.Writer, doc_ids: Sequence[int]) -> None:
    """Documents and their sections out of both stores, committed."""
    for doc_id in doc_ids:
        writer.delete_document(doc_id)
    conn.executemany("DELETE FROM sections WHERE doc_id = ?", [(doc_id,) for doc_id in doc_ids])
    conn.executemany("DELETE FROM documents WHERE id = ?", [(doc_id,) for doc_id in doc_ids])
    _commit(conn, writer)


def _commit(conn: sqlite3.Connection, writer: engine.Writer) -> None:
    # The full-text index first: should the second commit not happen, the counts
    # differ and the next run rebuilds the index from the stored text.
    writer.commit()
    conn.commit()


def files_to_index(root: Path, exclude: Sequence[str]) -> list[Path]:
    """The files below `root` an indexing run reads: of a kind it parses, neither
    hidden nor in a hidden folder, not matched by an `exclude` glob (a name, or a path
    relative to `root` when it holds a "/") nor by a `.gitignore` rule, nor a symbolic
    link to one of the others. Man pages' aliases are such links (`bunzip2.1.gz` to
    `bzip2.1.gz`: 43 of manpages-zh's pages): indexed, the page came first three times."""
    found = list(_files_below(root, exclude))
    # The walk does not enter linked folders and the root is resolved: a file that is
    # not a link is at its own path.
    targets = {path for path in found if not path.is_symlink()}
    return [path for path in found if path in targets or path.resolve() not in targets]


def _files_below(root: Path, exclude: Sequence[str]) -> Iterator[Path]:
    names_only = [glob for glob in exclude if "/" not in glob.strip("/")]
    paths = [glob.strip("/") for glob in exclude if "/" in glob.strip("/")]

    gitignores = GitIgnores(root)

    def excluded(rel: str, name: str, *, is_dir: bool) -> bool:
        return (
            name.startswith(".")
            or any(fnmatch.fnmatchcase(name, glob) for glob in names_only)
            or any(fnmatch.fnmatchcase(rel, glob) for glob in paths)
            or gitignores.ignored(rel, is_dir=is_dir)
        )

    for folder, dirs, names in os.walk(root):
        base = Path(folder).relative_to(root).as_posix()
        prefix = "" if base == "." else base + "/"
        if prefix:
            gitignores.enter(base)
        dirs[:] = [name for name in dirs if not excluded(prefix + name, name, is_dir=True)]
        pages = _page_stems(names)
        for name in names:
            path = Path(folder, name)
            if (
                kind_of(path) is not None
                and not (pages and _is_other_form_of_page(name, pages))
                and not excluded(prefix + name, name, is_dir=False)
                and path.is_file()
            ):
                yield path


def _page_stems(names: Sequence[str]) -> frozenset[str]:
    """The names of a folder's HTML pages without their extension."""
    return frozenset(
        stem
        for stem, dot, ext in (name.rpartition(".") for name in names)
        if dot and ext.lower() in _PAGE_EXTENSIONS
    )


def _is_other_form_of_page(name: str, pages: frozenset[str]) -> bool:
    """A text or Markdown file beside the HTML page of its name is that page's source
    (git's `git-branch.txt` beside `git-branch.html`, a README.md rendered to
    README.html), a PDF or Word file the same document printed (bash's `bashref.pdf`
    beside `bashref.html`): the page alone is indexed, with its anchors."""
    stem, _, ext = name.removesuffix(GZIP_SUFFIX).rpartition(".")
    return ext.lower() in _OTHER_FORMS and stem in pages


def _url(path: Path) -> str:
    """The file's URL, a symbolic link's its target's. Only the file itself can be one
    (the walk does not enter linked folders, and the root is resolved): one `lstat`,
    not one per folder of the path."""
    return (path.resolve() if path.is_symlink() else path).as_uri()


def _indexed_under(conn: sqlite3.Connection, root: Path) -> set[str]:
    """The paths under `root` the database holds, read before `prepare` (none when it
    has no documents yet)."""
    try:
        return {path for (path,) in _under(conn, root, "path")}
    except sqlite3.OperationalError:  # no such table (a new database)
        return set()


def _known_under(conn: sqlite3.Connection, root: Path) -> dict[str, _Known]:
    """Indexed documents whose path lies under `root`, or that are `root` itself."""
    rows = _under(conn, root, "path, id, sha256, root, source, own_tags, tags, parsed_by")
    return {path: _Known(*rest) for path, *rest in rows}


def _under(conn: sqlite3.Connection, root: Path, columns: str) -> sqlite3.Cursor:
    """`columns` of the documents under `root` (a range scan on the path key)."""
    prefix = str(root).rstrip(os.sep) + os.sep
    upper = prefix[:-1] + chr(ord(os.sep) + 1)
    return conn.execute(
        f"SELECT {columns} FROM documents WHERE (path >= ? AND path < ?) OR path = ?",
        (prefix, upper, str(root)),
    )


def _store(
    conn: sqlite3.Connection,
    writer: engine.Writer,
    place: _Place,
    read: _Read,
    rows: FileRows | None,
    tokenizer: Tokenizer,
) -> Outcome:
    path, known, root = read.path, read.known, place.root
    rel_path = path.relative_to(root).as_posix()
    if read.outcome == "unchanged" and known is not None:
        if known.root != str(root):  # now indexed from another root: paths are relative to it
            conn.execute(
                "UPDATE documents SET root = ?, rel_path = ? WHERE id = ?",
                (str(root), rel_path, known.id),
            )
        tags = place.tags(rel_path, known.own_tags.split())
        if (known.source, known.tags) != (place.source, tags):
            # Another source or other folder rules: the text is the same, its filters not.
            conn.execute(
                "UPDATE documents SET source = ?, tags = ? WHERE id = ?",
                (place.source, tags, known.id),
            )
            writer.delete_document(known.id)
            add_stored(conn, writer, tokenizer, known.id)
        return "unchanged"
    if read.outcome is not None:
        return read.outcome
    if rows is None:
        return "not_text"
    tags = place.tags(rel_path, rows.tags)
    values = (
        str(path),
        str(root),
        rel_path,
        _url(path),
        rows.title,
        rows.published_at,
        read.digest,
        place.source,
        " ".join(rows.tags),
        tags,
        rows.modified_at,
        READER_VERSION,
    )
    if known is None:
        cursor = conn.execute(
            "INSERT INTO documents (path, root, rel_path, url, title, published_at, sha256,"
            " source, own_tags, tags, modified_at, parsed_by)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            values,
        )
        doc_id = cursor.lastrowid
        assert doc_id is not None  # noqa: S101 - an INSERT sets it
    else:
        doc_id = known.id
        conn.execute(
            "UPDATE documents SET path = ?, root = ?, rel_path = ?, url = ?, title = ?,"
            " published_at = ?, sha256 = ?, source = ?, own_tags = ?, tags = ?,"
            " modified_at = ?, parsed_by = ? WHERE id = ?",
            (*values, doc_id),
        )
        writer.delete_document(doc_id)
        conn.execute("DELETE FROM sections WHERE doc_id = ?", (doc_id,))
    scope = engine.Tagged(place.source, tuple(tags.split()), timestamp(rows.modified_at))
    for position, row in enumerate(rows.sections):
        cursor = conn.execute(
            "INSERT INTO sections (doc_id, position, heading, anchor, title, body, code)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (doc_id, position, row.heading, row.anchor, row.title, row.body, row.code),
        )
        assert cursor.lastrowid is not None  # noqa: S101 - an INSERT sets it
        writer.add(cursor.lastrowid, doc_id, *row.terms, scope=scope)
    return "added" if known is None else "updated"
