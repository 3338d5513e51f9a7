"""How many searches run at once, and how long one may wait for its turn.

One process has one or two cores. Sixty-four searches interleaved on them each get a
sixty-fourth of the CPU at every await, so all of them finish late, and a provider
that answered in 60 ms is cut by the search's deadline because nobody had time to
read its answer. But a fixed limit on searches in flight would starve the opposite
load: searches that spend most of their time waiting for slow back ends, with the
CPU idle. So the gate watches what the CPU has to give, the event loop's lag (how
late a short sleep wakes up), and sets how many searches may run by it, as TCP sets
its window: one more every 20 ms while the lag stays under `lag_s`, a quarter fewer
when it does not (never below `min_searches`, never above `max_searches`). When the
limit is reached, newcomers wait, in arrival order, and the wait counts against
their deadline. But the gate never keeps the CPU idle while searches wait: a
waiting search also starts whenever a short sleep wakes on time (the loop had nothing
else to run), past the limit without raising it, one every 10 ms at most. The lag
is smoothed and the limit follows it in steps, so after a busy spell the limit stays low for a
while; at 16 connections the running few (4) then all waited on their back ends
together and the loop sat idle 13 % of the time with a dozen searches held at the
gate. A search that cannot start within `max_wait_s` is refused at once with
`TooManyRequests` (HTTP 429 and a Retry-After), instead of being answered after its
deadline. Searches that run as tasks wait as long as it takes: nobody is holding a
connection open for them.

What comes after the fan-out (merging, cleaning, ranking, the summary, the cache
write) takes its time too, longer when the process is busy; `FinishingTime` learns it
(the p95 of the last searches), and the fan-out ends that much before the deadline.

The gate's state is per event loop (`Sleuth.search_sync` runs each search on a loop
of its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from pydantic import BaseModel, ConfigDict, Field

from sleuth.errors import TooManyRequests
from sleuth.metrics import percentile

__all__ = ["AdmissionSettings", "FinishingTime", "Gate"]

#: How often the loop's lag is sampled while searches run.
_TICK_S = 0.02
#: How often, while searches wait, the gate looks whether the loop is idle, and how
#: late a sleep may wake and the loop still count as idle (an idle loop wakes a
#: 2 ms sleep 0.2-0.4 ms late, a busy one by the length of what it is running).
_IDLE_TICK_S = 0.002
_IDLE_LATE_S = 0.001
#: After one search started so, the next waits this long: a search brings about this
#: much CPU, due once its back ends answer. Without the gap the idle loop of a
#: 50 ms fan-out let in a search every 2 ms, and at 64 connections 170-190 answers
#: in 600 came back short, their providers read too late (with it: 0-1, as before).
_IDLE_GAP_S = 0.01


class AdmissionSettings(BaseModel):
    """The `admission:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lag_s: float = Field(
        0.02,
        gt=0,
        description="New searches start while the event loop's lag (smoothed) is below "
        "this; above it the CPU is saturated and newcomers wait their turn.",
    )
    min_searches: int = Field(
        4, ge=1, description="This many searches may always run at once, whatever the lag."
    )
    max_searches: int = Field(
        64, ge=1, description="Never more than this many at once in one process."
    )
    max_wait_s: float | None = Field(
        None,
        gt=0,
        description="A search that has waited this long for its turn is refused with "
        "too_many_requests (HTTP 429); default: two thirds of deadline_s.",
    )


class _LoopGate:
    """The gate on one event loop: who runs, who waits, and the loop's lag."""

    def __init__(self, settings: AdmissionSettings) -> None:
        self.settings = settings
        self.running = 0
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.lag_s = 0.0
        #: How many may run now; moved by the lag.
        self.limit = float(settings.max_searches)
        self._monitor: asyncio.Task[None] | None = None
        self._idle_watch: asyncio.Task[None] | None = None

    def _open(self) -> bool:
        return self.running < int(self.limit)

    async def acquire(self) -> None:
        self._watch()
        if not self.waiting and self._open():
            self.running += 1
            return
        turn = asyncio.get_running_loop().create_future()
        self.waiting.append(turn)
        self._watch_idle()
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # the turn came just as the wait was given up
            else:
                with contextlib.suppress(ValueError):
                    self.waiting.remove(turn)
            raise

    def release(self) -> None:
        self.running -= 1
        self._wake()

    def _wake(self) -> None:
        while self.waiting and self._open():
            turn = self.waiting.popleft()
            if not turn.done():
                self.running += 1
                turn.set_result(None)

    def _watch(self) -> None:
        if self._monitor is None or self._monitor.done():
            self._monitor = asyncio.get_running_loop().create_task(self._sample())

    async def _sample(self) -> None:
        """Sample the lag while anything runs or waits; a quiet loop has none."""
        while self.running or self.waiting:
            before = time.perf_counter()
            await asyncio.sleep(_TICK_S)
            late = max(0.0, time.perf_counter() - before - _TICK_S)
            self.lag_s = 0.7 * self.lag_s + 0.3 * late
            settings = self.settings
            if self.lag_s < settings.lag_s:
                self.limit = min(settings.max_searches, self.limit + 1)
            else:
                self.limit = max(settings.min_searches, self.limit * 0.75)
            self._wake()
        self.lag_s = 0.0

    def _watch_idle(self) -> None:
        if self._idle_watch is None or self._idle_watch.done():
            self._idle_watch = asyncio.get_running_loop().create_task(self._fill_idle())

    async def _fill_idle(self) -> None:
        """While searches wait: each time a short sleep wakes on time, the loop had
        nothing to run, so one more search starts past the limit, then none for
        `_IDLE_GAP_S`. The limit itself is left to the lag: raised to let it in, it
        stayed raised, let in more on every release, and at 64 connections 2-3 % of
        the answers came back short (providers read late), against none before."""
        while self.waiting:
            before = time.perf_counter()
            await asyncio.sleep(_IDLE_TICK_S)
            idle = time.perf_counter() - before - _IDLE_TICK_S < _IDLE_LATE_S
            if idle and self.running < self.settings.max_searches:
                while self.waiting:
                    turn = self.waiting.popleft()
                    if not turn.done():
                        self.running += 1
                        turn.set_result(None)
                        break
                await asyncio.sleep(_IDLE_GAP_S)


class Gate:
    """Admission of searches, per event loop (see the module's docstring)."""

    def __init__(self, settings: AdmissionSettings, deadline_s: float) -> None:
        self.settings = settings
        self.max_wait_s = settings.max_wait_s or deadline_s * 2 / 3
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopGate] = (
            weakref.WeakKeyDictionary()
        )

    @asynccontextmanager
    async def admit(self, *, patient: bool = False) -> AsyncIterator[None]:
        """Wait for a turn. Without `patient`, a wait past `max_wait_s` raises
        `TooManyRequests`."""
        loop = asyncio.get_running_loop()
        gate = self._loops.get(loop)
        if gate is None:
            gate = self._loops[loop] = _LoopGate(self.settings)
        if patient:
            await gate.acquire()
        else:
            try:
                async with asyncio.timeout(self.max_wait_s):
                    await gate.acquire()
            except TimeoutError:
                raise TooManyRequests(
                    f"sleuth is busy ({gate.running} searches running, {len(gate.waiting)} "
                    f"waiting); this one could not start within {self.max_wait_s:g}s: retry "
                    "shortly, or submit it as a task",
                    retry_after_s=1.0,
                ) from None
        try:
            yield
        finally:
            gate.release()


class FinishingTime:
    """The wall time of what follows the fan-out, over the last `window` searches."""

    def __init__(self, window: int = 200) -> None:
        self._seconds: deque[float] = deque(maxlen=window)

    def record(self, seconds: float) -> None:
        self._seconds.append(seconds)

    def reserve_s(self, deadline_s: float) -> float:
        """How long before the deadline the fan-out should end: the p95 of what
        followed it lately, at least 20 ms and at most a third of the deadline.

        >>> finishing = FinishingTime()
        >>> finishing.reserve_s(3.0)
        0.02
        >>> for ms in range(1, 101):
        ...     finishing.record(ms / 1000)
        >>> finishing.reserve_s(3.0), finishing.reserve_s(0.09)
        (0.095, 0.03)
        """
        p95 = percentile(self._seconds, 0.95)
        if p95 is None:
            return _MIN_RESERVE_S
        return min(deadline_s / 3, max(_MIN_RESERVE_S, p95))


_MIN_RESERVE_S = 0.02
