"""Parsing the files of an indexing run, in worker processes once there are enough.

The indexer hands over batches of files (path, bytes, mtime) in order and gets each
batch's rows back in the same order (`Parser.parsed`). Once `parallel_from` files
needed parsing (a full build, not a re-index of a few changed ones), worker
processes parse them, up to `_AHEAD` batches a worker ahead of the one the caller
stores, while the caller stores the rows of the earlier batches. Once the workers
have started the caller parses nothing itself: its storing and the full-text
writer's thread take about a quarter of the CPU of a file, so with a worker per core
the cores stay busy, whereas a batch it parsed itself held back the rows the workers
had ready (the first file was stored after that batch) and let their queues run dry.
Until they have started (a fork server's take seconds) it parses the batches itself.

The workers are forked from the caller when it runs no other thread (on Linux): they
start in milliseconds, with everything already imported. A process that runs other
threads (the full-text writer's, a progress bar's, a server's) must not be forked,
since a lock one of them holds would stay locked in the child; its workers come from a
fork server, a fresh interpreter that imports sleuth first (about 2 s of CPU, and
each worker imports the caller's main module again). `Parser.start` is therefore
called before the indexer opens the full-text index.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack
from pathlib import Path
from typing import Generic, TypeVar

from sleuth.kb.rows import FileRows, files_rows
from sleuth.kb.tokenize import Tokenizer

# Files sent to a worker at once.
BATCH = 16
# Batches sent but not yet stored, at most, per worker (memory stays bounded: a batch's
# rows are about 150 KB). Enough that the workers keep parsing while the caller
# commits: two workers have 256 files in hand, twice what they parse in the 0.1 s a
# commit of 1,000 files takes.
_AHEAD = 8

Files = list[tuple[Path, bytes, float]]
Parsing = list[FileRows | None] | Future[list[FileRows | None]]
Item = TypeVar("Item")


class Parser(Generic[Item]):
    """Parses batches in a pool of `workers` processes when started, else here. A pool
    whose workers died (a fork server's could not start: a caller's main module that
    cannot be imported again, such as a script read from standard input) is given up,
    and its batches parsed here."""

    def __init__(
        self, tokenizer: Tokenizer, workers: int, stack: ExitStack, parallel_from: int
    ) -> None:
        self.tokenizer = tokenizer
        self.workers = workers
        self.parallel_from = parallel_from
        self.pool: ProcessPoolExecutor | None = None
        self._stack = stack
        # The pool's first task, until a worker has run it (the workers are starting).
        self._starting: Parsing | None = None

    def start(self) -> None:
        """Start the worker processes (nothing when there are to be none, or they run)."""
        if self.pool is not None or self.workers <= 1:
            return
        context = multiprocessing.get_context(start_method())
        if context.get_start_method() == "forkserver":
            context.set_forkserver_preload(["sleuth.kb.rows"])  # imported once, not per worker
        self.pool = self._stack.enter_context(
            ProcessPoolExecutor(max_workers=self.workers, mp_context=context)
        )
        # The first task starts every worker: forked now, before this process starts
        # the pool's own thread or opens the full-text index.
        self._starting = self._submit([])

    def parsed(
        self, items: Iterator[tuple[Item, Files]], to_parse: int = 0
    ) -> Iterator[tuple[Item, list[FileRows | None]]]:
        """Each item with the rows of its files, in order. `to_parse` counts files known
        to need parsing before any item is seen; the workers start once that count,
        with the files of the items seen, reaches `parallel_from`."""
        waiting: deque[tuple[Item, Files, Parsing]] = deque()
        for item, todo in items:
            to_parse += len(todo)
            if to_parse >= self.parallel_from:
                self.start()
            waiting.append((item, todo, self._parse(todo)))
            # Rows are handed on as soon as they are ready, in order; the caller waits
            # only when too many batches are ahead of the one it stores.
            while waiting and (
                len(waiting) > _AHEAD * self.workers * (self.pool is not None)
                or _ready(waiting[0][2])
            ):
                item_, todo_, parsing = waiting.popleft()
                yield item_, self._result(todo_, parsing)
        while waiting:
            item_, todo_, parsing = waiting.popleft()
            yield item_, self._result(todo_, parsing)

    def _parse(self, todo: Files) -> Parsing:
        """In a worker once they run, else here."""
        if not todo:
            return []
        if self._starting is not None:
            if not _ready(self._starting):
                return files_rows(todo, self.tokenizer)
            self._starting = None
        return self._submit(todo)

    def _submit(self, todo: Files) -> Parsing:
        if self.pool is not None:
            try:
                return self.pool.submit(files_rows, todo, self.tokenizer)
            except BrokenProcessPool:
                self.pool = None
        return files_rows(todo, self.tokenizer)

    def _result(self, todo: Files, parsing: Parsing) -> list[FileRows | None]:
        if not isinstance(parsing, Future):
            return parsing
        try:
            return parsing.result()
        except BrokenProcessPool:
            self.pool = None
            return files_rows(todo, self.tokenizer)


def batches(items: Iterator[Item], size: int = BATCH) -> Iterator[list[Item]]:
    while batch := list(itertools.islice(items, size)):
        yield batch


def start_method() -> str:
    """'fork' when this process runs no other thread (Linux lists a process's threads
    in /proc/self/task), else 'forkserver'."""
    if sys.platform != "linux":
        return "forkserver"
    try:
        alone = len(os.listdir("/proc/self/task")) == 1
    except OSError:
        alone = False
    return "fork" if alone else "forkserver"


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _ready(parsing: Parsing) -> bool:
    return not isinstance(parsing, Future) or parsing.done()
