"""`Alarm`: a bound on one await, as `asyncio.timeout` sets it, for a provider call's path.

It does what `asyncio.Timeout` does (one timer of the loop that cancels the task, the
cancellation turned into a `TimeoutError` only when it is the alarm's own, counted
with `Task.cancelling` / `uncancel` so that nested bounds and outside cancellations
stay apart) without the context manager and its state machine: on the no-fault path
of a provider call, two `asyncio.timeout` blocks cost more than the rest of the
call's policies together. Use it as a try block around the await:

>>> import asyncio
>>> async def slow() -> str:
...     loop = asyncio.get_running_loop()
...     alarm = Alarm(loop, loop.time() + 0.01)
...     try:
...         await asyncio.sleep(1)
...     except asyncio.CancelledError as exc:
...         if alarm.expired():
...             return "timed out"
...         raise
...     finally:
...         alarm.clear()
...     return "answered"
>>> asyncio.run(slow())
'timed out'
"""

from __future__ import annotations

import asyncio

__all__ = ["Alarm"]


class Alarm:
    """Cancels the task that sets it at `when` (on the loop's clock) unless `clear`ed
    first. After a `CancelledError`, `expired()` says whether it was the alarm's (then
    raise `TimeoutError` in its place); `clear()` always, in a `finally`."""

    __slots__ = ("_cancelling", "_handle", "_loop", "_rang", "_settled", "_task")

    def __init__(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        task = asyncio.current_task(loop)
        if task is None:
            raise RuntimeError("an Alarm bounds an await inside a task")
        self._loop = loop
        self._task = task
        self._cancelling = task.cancelling()
        self._rang = False
        self._settled = False
        self._handle: asyncio.Handle = loop.call_at(when, self._ring)

    def _ring(self) -> None:
        self._rang = True
        self._task.cancel()

    def ring_soon(self) -> None:
        """Bring the alarm forward to now (as `Timeout.reschedule(loop.time())`
        does); nothing once it has rung."""
        if not self._rang:
            self._handle.cancel()
            self._handle = self._loop.call_soon(self._ring)

    def expired(self) -> bool:
        """Whether the cancellation being handled is this alarm's: it rang and no
        other cancellation was asked for meanwhile."""
        if not self._rang or self._settled:
            return False
        self._settled = True
        return self._task.uncancel() <= self._cancelling

    def clear(self) -> None:
        """The await is over: the alarm will not ring; one that rang but whose
        cancellation never arrived (the await ended first) asks it back."""
        self._handle.cancel()
        if self._rang and not self._settled:
            self._settled = True
            self._task.uncancel()
