"""Whether two checkouts of sleuth index the same folders into the same content.

Run: PYTHONPATH=src .venv/bin/python bench/kb_same_index.py --against ../ab/src
     [FOLDER ...]  (default: ../kb_corpus/en, ../kb_corpus/zh and Debian's
     python3.11-doc HTML, when they are there)

A change to the indexing path that is meant to be faster only (parsing, tokenising,
compression) must leave the index as it was: each file's title, dates and tags, and
for each of its sections the heading, anchor, headings line, the stored prose and
code (as text: two compressors may write different bytes for the same text) and the
index terms of every field, with the jieba and the trigram tokenizer. Each checkout
reads every file in a process of its own (`sleuth.kb.rows.file_rows`, what indexing
runs) and prints a digest per file; the files whose digests differ are named, with
the first field that differs. Exits 1 when any file differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from _common import KB_CORPUS

DEFAULT_FOLDERS = (
    KB_CORPUS / "en",
    KB_CORPUS / "zh",
    Path("/usr/share/doc/python3.11-doc/html"),
)

# Run in each checkout: one line of JSON per file, {path: [field digests]}.
_DUMP = """
import hashlib, json, sys
from pathlib import Path
from sleuth.kb.index import DEFAULT_EXCLUDE, files_to_index
from sleuth.kb.rows import file_rows
from sleuth.kb.store import unpack

def digest(value):
    return hashlib.sha256(repr(value).encode("utf-8")).hexdigest()[:16]

tokenizer = sys.argv[1]
for folder in sys.argv[2:]:
    for path in sorted(files_to_index(Path(folder), DEFAULT_EXCLUDE)):
        rows = file_rows(path, path.read_bytes(), path.stat().st_mtime, tokenizer)
        if rows is None:
            fields = ["not text"]
        else:
            fields = [digest((rows.title, rows.published_at, rows.modified_at, rows.tags))]
            for row in rows.sections:
                fields += [
                    digest((row.heading, row.anchor, row.title)),
                    digest((unpack(row.body), unpack(row.code))),
                    *map(digest, row.terms),
                ]
        print(json.dumps({str(path): fields}))
"""
# What each section's digests are, in order (after the file's one).
_FIELDS = (
    "headings",
    "stored text",
    "page title terms",
    "title terms",
    "prose terms",
    "code terms",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout's src/")
    parser.add_argument("folders", type=Path, nargs="*")
    args = parser.parse_args()
    folders = [str(f) for f in (args.folders or DEFAULT_FOLDERS) if f.is_dir()]
    here = Path(__file__).resolve().parent.parent / "src"
    differing = 0
    for tokenizer in ("jieba", "trigram"):
        ours, theirs = dump(here, tokenizer, folders), dump(args.against, tokenizer, folders)
        for path in sorted(ours.keys() | theirs.keys()):
            if ours.get(path) != theirs.get(path):
                differing += 1
                print(f"{tokenizer}: {path}: {first_difference(ours.get(path), theirs.get(path))}")
        sections = sum((len(fields) - 1) // len(_FIELDS) for fields in ours.values())
        print(f"{tokenizer}: {len(ours)} files, {sections} sections compared")
    print(f"files that differ: {differing}")
    sys.exit(1 if differing else 0)


def dump(src: Path, tokenizer: str, folders: list[str]) -> dict[str, list[str]]:
    done = subprocess.run(  # noqa: S603 - this bench's own script
        [sys.executable, "-c", _DUMP, tokenizer, *folders],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(src)},
    )
    found: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        found.update(json.loads(line))
    return found


def first_difference(ours: list[str] | None, theirs: list[str] | None) -> str:
    if ours is None or theirs is None:
        return "only in one checkout"
    if len(ours) != len(theirs):
        per = len(_FIELDS)
        return f"{(len(ours) - 1) // per} sections against {(len(theirs) - 1) // per}"
    for position, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if a != b:
            if position == 0:
                return "title, dates or tags"
            section, field = divmod(position - 1, len(_FIELDS))
            return f"section {section}: {_FIELDS[field]}"
    return "the same"


if __name__ == "__main__":
    main()
