"""A task's progress events on their way to the store: `EventWriter` appends them in
the order they were emitted, and `first_of` waits for whichever wake-up comes first.
Used by `sleuth.tasks.TaskRunner` (the workers) only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from sleuth.store import Store
from sleuth.store.base import NewEvent

__all__ = ["EventWriter", "first_of"]

log = logging.getLogger(__name__)


async def first_of(*waits: Coroutine[Any, Any, Any], timeout_s: float) -> None:
    """Return when the first of `waits` is done (or after `timeout_s`); cancel the rest."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class EventWriter:
    """Appends a task's events to the store in the order they were emitted.

    `emit` is synchronous (the gateway's progress hook runs inside the search); one
    background task drains the queue, so `seq` follows emission order. It writes as
    soon as an event is queued, and everything queued by then in one `append_events`:
    events emitted while a write is in flight go together in the next one, so a
    follower waits at most one write for an event and a burst costs one round trip.
    """

    def __init__(self, store: Store, task_id: str, clock: Callable[[], float]) -> None:
        self._store = store
        self._task_id = task_id
        self._clock = clock
        self._queue: asyncio.Queue[NewEvent | asyncio.Future[None] | None] = asyncio.Queue()
        self._drain = asyncio.create_task(self._write())

    def emit(self, kind: str, detail: dict[str, Any]) -> None:
        self._queue.put_nowait((kind, detail, self._clock()))

    async def flush(self) -> None:
        """Return once every event emitted so far is stored (a workflow's checkpoint)."""
        marker: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(marker)
        await marker

    async def _write(self) -> None:
        closed = False
        while not closed:
            batch: list[NewEvent] = []
            flushed: list[asyncio.Future[None]] = []
            item = await self._queue.get()
            while True:
                if item is None:  # `close` queues None after the last event
                    closed = True
                    break
                if isinstance(item, asyncio.Future):
                    flushed.append(item)
                else:
                    batch.append(item)
                if self._queue.empty():
                    break
                item = self._queue.get_nowait()
            if batch:
                try:
                    await self._store.append_events(self._task_id, batch)
                except Exception:  # progress is informative; losing some never fails the task
                    kinds = ", ".join(kind for kind, _, _ in batch)
                    log.exception(
                        "events (%s) of task %s could not be stored", kinds, self._task_id
                    )
            for marker in flushed:
                if not marker.done():
                    marker.set_result(None)

    async def close(self) -> None:
        self._queue.put_nowait(None)
        await self._drain
