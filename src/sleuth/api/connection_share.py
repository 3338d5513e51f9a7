"""Keep-alive connections spread evenly over `sleuth serve --processes N`.

Linux hands a port's new connections to the workers' SO_REUSEPORT sockets by a hash of
the connection's addresses, so a client's few keep-alive connections split as a coin
falls: wrk's 16 went 9/7, 10/6, 12/4 over two workers in six tries. A connection stays
with its worker for as long as it lives, so the worker with 12 ran out of core while
the other one idled.

So the workers publish how many connections each holds, in a table they share
(`Counts`, one slot each, written only by its owner), and a worker holding
more than its even share (`ceil(total / N)`) answers the next request on one of its
connections with `Connection: close`. The client opens a new connection, which the
kernel hashes anew; one that lands on the same worker again is sent away again, so the
split reaches even within a few requests. Never more connections are sent away at
once than the worker holds over its share (`_leaving`), and one worker alone (or a
client with one connection) is never touched.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Protocol

__all__ = ["ConnectionShare", "Counts"]


class Counts(Protocol):
    """The shared table: one integer a worker (a `multiprocessing` RawArray, which
    the workers get at their start; a list in one process)."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> int: ...
    def __setitem__(self, index: int, value: int, /) -> None: ...
    def __iter__(self) -> Iterator[int]: ...


class ConnectionShare:
    """One worker's view of the shared table: its own slot, written on every
    connection opened and closed, and the others', read when a request comes."""

    __slots__ = ("_counts", "_leaving", "_slot")

    def __init__(self, counts: Counts, slot: int) -> None:
        if not 0 <= slot < len(counts):
            raise ValueError(f"slot {slot} is outside a table of {len(counts)} workers")
        self._counts = counts
        self._slot = slot
        self._leaving = 0  # connections told to close that have not closed yet

    def held(self, connections: int) -> None:
        """The worker now holds `connections` connections (after one opened or closed)."""
        self._counts[self._slot] = connections

    def should_leave(self) -> bool:
        """Whether the connection whose request just came should close after its
        response: this worker holds more than its share, counting those already told."""
        counts = self._counts
        if len(counts) < 2:
            return False
        mine = counts[self._slot] - self._leaving
        share = math.ceil(sum(counts) / len(counts))
        if mine <= share:
            return False
        self._leaving += 1
        return True

    def left(self) -> None:
        """A connection told to leave has closed."""
        self._leaving = max(0, self._leaving - 1)
