"""Asynchronous search tasks: submit, track, cancel, and run every accepted task to
success or failed, even across a crash.

    submit ──► pending ──claim──► running ──► success | failed
       │  (idempotency key:            │ lease renewed while it runs;
       │   the same task back)         │ a dead worker's lease runs out and
       └─ queue full: 429               │ another claim runs it again

A task lives in the store (SQLite by default, Redis when scaled out), never only in
memory: a worker claims it with a lease (`tasks.lease_s`) and renews the lease while
the search runs. When the process is killed (`kill -9`), nothing is lost: pending
tasks are still pending, and a running task's lease runs out, so the next worker to
look (in this or another process, after a restart) claims it again. A task claimed
`max_attempts` times without finishing fails as `task_abandoned` rather than crash
workers forever. Completion is idempotent: only the worker holding the lease can
finish a task, so a task finishes once. On a graceful stop, running tasks get
`serve.shutdown_grace_s` to finish and the rest go back to the queue.

Progress events (accepted, started, provider_started, provider_finished, stage) are
appended to the store in order by one writer per task, which stores whatever has
queued up in one call (one round trip, however many events a burst brought). The
"done" event is written by the same atomic store call that makes the task terminal
(finish, or the cancel of a pending task): a task never has "done" before it is
finished, nor is finished without it, even when its worker dies in between. So
`follow` streams events to the HTTP and MCP adapters until it reads a terminal task,
and needs to wait for nothing more.

A task is visible to its tenant only: another tenant's task is "not found", exactly
as a task that does not exist.

A task may also be a workflow run (`submit_workflow`): the task carries the
workflow's definition, inputs and schedule window, its worker runs it with
`sleuth.workflows.engine`, and its events are the run's checkpoints, so a run whose
worker died resumes at the step and item it reached when the task is claimed again.
The workers also run the schedules of `workflows_dir` (`schedule_once`): each due slot
is submitted under a key naming the workflow and the slot, so however many workers
see it, a slot is one run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sleuth.contract import (
    ErrorInfo,
    SearchRequest,
    SearchResponse,
    Task,
    TaskEvent,
    WorkflowRun,
)
from sleuth.errors import (
    SearchError,
    TaskAbandoned,
    TaskCancelled,
    TaskNotFound,
    TooManyRequests,
)
from sleuth.gateway import Sleuth
from sleuth.observe import call_context
from sleuth.service_settings import TaskSettings
from sleuth.store import EventRecord, Store, TaskRecord
from sleuth.task_events import EventWriter, first_of
from sleuth.workflows.arguments import check_arguments
from sleuth.workflows.engine import WorkflowEngine
from sleuth.workflows.runs import Schedules, run_info, run_request
from sleuth.workflows.workflow_models import WorkflowDefinition

__all__ = ["DEFAULT_TENANT", "TaskRunner", "task_from_record"]

log = logging.getLogger(__name__)

#: The tenant of requests made without API keys (auth off, the library, the CLI).
DEFAULT_TENANT = "default"

_PRIORITY = {"normal": 0, "high": 1}

Stop = Literal["cancelled", "lease_lost", "shutdown"]


def _utc(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def _task_event(event: EventRecord) -> TaskEvent:
    return TaskEvent(
        seq=event.seq,
        at=datetime.fromtimestamp(event.at, UTC),
        kind=event.kind,
        detail={**event.detail},
    )


def _is_workflow(record: TaskRecord) -> bool:
    return "workflow" in record.request


def task_from_record(record: TaskRecord, events: list[EventRecord] | None = None) -> Task:
    """The contract's view of a stored task (no tenant, lease or worker)."""
    workflow = _is_workflow(record)
    result = record.result if record.result and not workflow else None
    return Task(
        task_id=record.task_id,
        status=record.status,
        events=[_task_event(event) for event in events or []],
        result=SearchResponse.model_validate(result) if result else None,
        workflow=str(record.request["workflow"]["name"]) if workflow else None,
        run=WorkflowRun.model_validate(record.result) if workflow and record.result else None,
        error=ErrorInfo.model_validate(record.error) if record.error else None,
        created_at=datetime.fromtimestamp(record.created_at, UTC),
        updated_at=datetime.fromtimestamp(record.updated_at, UTC),
        started_at=_utc(record.started_at),
        finished_at=_utc(record.finished_at),
        attempts=record.attempts,
    )


@dataclass
class _Running:
    record: TaskRecord
    search: asyncio.Task[SearchResponse | WorkflowRun]
    stop: Stop | None = None


class TaskRunner:
    """Submits tasks to the store and runs them with `settings.workers` workers.

    Use `async with TaskRunner(...)` (or `start`/`stop`) to run workers in this
    process; without them, it only submits and reads (another process runs them).

    >>> import asyncio
    >>> from sleuth.testing import memory_settings
    >>> from sleuth.store import MemoryStore
    >>> async def demo() -> str:
    ...     store = MemoryStore()
    ...     async with Sleuth(memory_settings(), store=store) as sleuth:
    ...         async with TaskRunner(sleuth, store) as runner:
    ...             task, _ = await runner.submit({"query": "local knowledge base"})
    ...             done = await runner.wait(task.task_id)
    ...             return done.status
    >>> asyncio.run(demo())
    'success'
    """

    def __init__(
        self,
        sleuth: Sleuth,
        store: Store,
        settings: TaskSettings | None = None,
        *,
        worker_id: str | None = None,
        clock: Callable[[], float] = time.time,
        schedules: bool = True,
    ) -> None:
        self.sleuth = sleuth
        self.store = store
        self.settings = settings or sleuth.settings.tasks
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._clock = clock
        #: Whether `start` also runs the schedules of `workflows_dir` (`sleuth run` does not).
        self.schedules = schedules
        self._wake = asyncio.Event()
        # Per task, one event per `follow` in progress, set when the task changes here.
        self._followers: dict[str, set[asyncio.Event]] = {}
        self._running: dict[str, _Running] = {}
        self._loops: list[asyncio.Task[None]] = []
        self._stopping = asyncio.Event()
        self._schedules = Schedules()

    # --- submitting and reading ------------------------------------------------------

    async def submit(
        self,
        request: SearchRequest | Mapping[str, Any],
        *,
        tenant: str = DEFAULT_TENANT,
        idempotency_key: str | None = None,
    ) -> tuple[Task, bool]:
        """Accept a task: (task, created). A retried submit with the same idempotency
        key returns the first task and False. Raises `InvalidRequest` (or
        `PolicyViolation`) for what `Sleuth.search` would refuse, checked here, and
        `TooManyRequests` when the queue is full; an accepted task always finishes."""
        req = self.sleuth.validate(request)
        pending = await self.store.count_tasks("pending")
        if pending >= self.settings.queue_max:
            retry_after = self.settings.queue_full_retry_after_s
            raise TooManyRequests(
                f"the task queue is full ({pending} pending, the limit is "
                f"{self.settings.queue_max}); retry after {retry_after:g}s",
                retry_after_s=retry_after,
            )
        now = self._clock()
        record, created = await self.store.create_task(
            TaskRecord(
                task_id=f"task_{uuid.uuid4().hex}",
                tenant=tenant,
                request=req.model_dump(mode="json"),
                created_at=now,
                updated_at=now,
                idempotency_key=idempotency_key,
                priority=_PRIORITY[req.priority],
            ),
            # With the task, not after it: a worker may claim and finish it at once.
            first=("accepted", {"query": req.query}, now),
        )
        if created:
            self._wake.set()
        return task_from_record(record), created

    async def submit_workflow(
        self,
        workflow: WorkflowDefinition,
        inputs: Mapping[str, Any] | None = None,
        *,
        tenant: str = DEFAULT_TENANT,
        idempotency_key: str | None = None,
        slot: datetime | None = None,
        base_dir: str | None = None,
    ) -> tuple[Task, bool]:
        """Accept a run of `workflow`: (task, created). `slot`: the schedule slot it is
        for (its window is since the slot before). The inputs are checked here
        (`InvalidRequest` naming each bad one), so an accepted run never fails for
        them; the task carries the definition, so an edit of the file does not change
        a run under way."""
        values = check_arguments(workflow.inputs, inputs or {})
        await self._room_in_queue()
        now = self._clock()
        request = run_request(workflow, values, slot=slot, base_dir=base_dir)
        record, created = await self.store.create_task(
            TaskRecord(
                task_id=f"task_{uuid.uuid4().hex}",
                tenant=tenant,
                request=request,
                created_at=now,
                updated_at=now,
                idempotency_key=idempotency_key,
            ),
            first=("accepted", {"workflow": workflow.name, "slot": request["slot"]}, now),
        )
        if created:
            self._wake.set()
        return task_from_record(record), created

    async def _room_in_queue(self) -> None:
        pending = await self.store.count_tasks("pending")
        if pending >= self.settings.queue_max:
            retry_after = self.settings.queue_full_retry_after_s
            raise TooManyRequests(
                f"the task queue is full ({pending} pending, the limit is "
                f"{self.settings.queue_max}); retry after {retry_after:g}s",
                retry_after_s=retry_after,
            )

    async def schedule_once(self) -> list[Task]:
        """Submit the runs of every scheduled workflow (`workflows_dir`) whose slots
        came since the last look; on the first look, its `catch_up` latest slots (no
        older than `tasks.retention_s`, whose runs may be forgotten). Returns the runs
        this call created."""
        now = datetime.fromtimestamp(self._clock(), UTC)
        made: list[Task] = []
        folder = self.sleuth.settings.workflows_dir

        async def submit(workflow: WorkflowDefinition, slot: datetime, key: str) -> bool:
            task, created = await self.submit_workflow(
                workflow,
                idempotency_key=key,
                slot=slot,
                base_dir=str(folder) if folder else None,
            )
            if created:
                made.append(task)
            return created

        await self._schedules.submit_due(
            self.sleuth.workflows.current().values(),
            now,
            oldest=now - timedelta(seconds=self.settings.retention_s),
            submit=submit,
        )
        return made

    async def get(self, task_id: str, tenant: str = DEFAULT_TENANT, *, events: bool = True) -> Task:
        record = await self._owned(task_id, tenant)
        found = await self.store.task_events(task_id) if events else None
        return task_from_record(record, found)

    async def cancel(self, task_id: str, tenant: str = DEFAULT_TENANT) -> Task:
        """Cancel a task: a pending one fails at once, a running one stops at its
        worker's next lease renewal (at once when it runs in this process); a finished
        one is returned as it is."""
        await self._owned(task_id, tenant)
        now = self._clock()
        error = TaskCancelled("cancelled by the caller").info().model_dump(mode="json")
        # "done" is stored only when this call fails a pending task, with that change.
        done = ("done", {"status": "failed", "error": "cancelled"})
        record = await self.store.cancel_task(task_id, error, now, done=done)
        if record is None:
            raise TaskNotFound(f"task_id: no task {task_id!r}", field="task_id")
        if record.status == "running":
            await self.store.append_event(task_id, "cancel_requested", {}, now)
            if (running := self._running.get(task_id)) is not None:
                self._halt(running, "cancelled")
        self._notify(task_id)
        return task_from_record(record)

    async def wait(
        self, task_id: str, tenant: str = DEFAULT_TENANT, timeout_s: float = 60.0
    ) -> Task:
        """The task once it is finished (events included)."""
        async with asyncio.timeout(timeout_s):
            async for _ in self.follow(task_id, tenant):
                pass
        return await self.get(task_id, tenant)

    async def follow(
        self, task_id: str, tenant: str = DEFAULT_TENANT, after: int = 0
    ) -> AsyncIterator[TaskEvent]:
        """The task's events after `after`, as they happen, until it is finished."""
        await self._owned(task_id, tenant)
        seen = after
        changed = asyncio.Event()
        followers = self._followers.setdefault(task_id, set())
        followers.add(changed)
        try:
            while True:
                changed.clear()
                # The task before its events: when it is terminal, its "done" (stored
                # with the terminal state) is among the events read next: none is missed.
                record = await self.store.get_task(task_id)
                for event in await self.store.task_events(task_id, seen):
                    seen = event.seq
                    yield _task_event(event)
                if record is None or record.status in ("success", "failed"):
                    return
                # Woken at once by this process's workers, or by the store when another
                # process appends (Redis); otherwise after poll_s.
                await first_of(
                    changed.wait(),
                    self.store.wait_task_events(task_id, seen, self.settings.poll_s),
                    timeout_s=self.settings.poll_s,
                )
        finally:
            followers.discard(changed)
            if not followers:
                self._followers.pop(task_id, None)

    async def _owned(self, task_id: str, tenant: str) -> TaskRecord:
        record = await self.store.get_task(task_id)
        if record is None or record.tenant != tenant:
            # Another tenant's task looks exactly like a missing one (no existence leak).
            raise TaskNotFound(f"task_id: no task {task_id!r}", field="task_id")
        return record

    def _notify(self, task_id: str) -> None:
        for changed in self._followers.get(task_id, ()):
            changed.set()

    # --- workers ---------------------------------------------------------------------

    async def __aenter__(self) -> TaskRunner:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        self._stopping.clear()
        self._loops = [asyncio.create_task(self._work()) for _ in range(self.settings.workers)]
        self._loops.append(asyncio.create_task(self._expire()))
        if self.schedules:
            self._loops.append(asyncio.create_task(self._schedule()))

    async def stop(self, grace_s: float = 0.0) -> None:
        """Stop taking tasks; give running ones `grace_s` to finish, then put the rest
        back in the queue (pending) for the next worker."""
        self._stopping.set()
        self._wake.set()
        if self._running and grace_s > 0:
            searches = [running.search for running in self._running.values()]
            await asyncio.wait(searches, timeout=grace_s)
        for running in list(self._running.values()):
            self._halt(running, "shutdown")
        await asyncio.gather(*self._loops, return_exceptions=True)
        self._loops = []

    async def run_once(self) -> bool:
        """Claim and run one task, if any is runnable; whether one was."""
        record = await self.store.claim_task(self.worker_id, self._clock(), self.settings.lease_s)
        if record is None:
            return False
        await self._run(record)
        return True

    async def _work(self) -> None:
        while not self._stopping.is_set():
            try:
                ran = await self.run_once()
            except Exception:  # a broken store must not kill the worker; it retries
                log.exception("worker %s could not claim a task", self.worker_id)
                ran = False
            if not ran and not self._stopping.is_set():
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.settings.poll_s)

    async def _expire(self) -> None:
        while not self._stopping.is_set():
            try:
                removed = await self.store.expire_tasks(self._clock() - self.settings.retention_s)
                if removed:
                    log.info("expired %d finished tasks", removed)
            except Exception:
                log.exception("expired tasks could not be deleted")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.settings.expire_every_s)

    async def _schedule(self) -> None:
        """Submit scheduled workflows' runs as their slots come (a second's grain)."""
        every = max(1.0, self.settings.poll_s)
        while not self._stopping.is_set():
            try:
                await self.schedule_once()
            except Exception:  # a broken store or file must not stop the schedules
                log.exception("scheduled workflows could not be submitted")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), every)

    def _halt(self, running: _Running, why: Stop) -> None:
        if running.stop is None:
            running.stop = why
        running.search.cancel()

    async def _run(self, record: TaskRecord) -> None:
        if self._stopping.is_set():  # claimed just as the stop began: leave it to the next
            await self.store.release_task(record.task_id, self.worker_id, self._clock())
            return
        events = EventWriter(self.store, record.task_id, self._clock)
        try:
            if record.attempts > self.settings.max_attempts:
                error = TaskAbandoned(
                    f"task was claimed {record.attempts} times and its worker stopped "
                    "every time; it is not run again",
                ).info()
                await self._finish(record, events, error=error)
                return
            events.emit("started", {"attempt": record.attempts, "worker": self.worker_id})
            # The new task copies this context: its call-log event names the task's tenant.
            search: asyncio.Task[SearchResponse | WorkflowRun]
            if _is_workflow(record):
                with call_context(tenant=record.tenant, tool_name="workflow"):
                    search = asyncio.create_task(self._run_workflow(record, events))
            else:
                with call_context(tenant=record.tenant, tool_name="task"):
                    search = asyncio.create_task(self._search(record, events))
            running = _Running(record, search)
            self._running[record.task_id] = running
            keeper = asyncio.create_task(self._keep_lease(running))
            response: SearchResponse | WorkflowRun | None = None
            error_info: ErrorInfo | None = None
            try:
                response = await search
            except asyncio.CancelledError:
                if running.stop is None:  # this worker itself is being cancelled
                    raise
            except SearchError as exc:
                error_info = exc.info()
            except Exception as exc:
                log.exception("task %s failed unexpectedly", record.task_id)
                error_info = SearchError(f"internal error: {type(exc).__name__}: {exc}").info()
            finally:
                keeper.cancel()
                self._running.pop(record.task_id, None)
            if running.stop == "lease_lost":
                return  # another worker owns it now
            if running.stop == "shutdown":
                events.emit("requeued", {"reason": "the worker shut down"})
                await events.close()
                await self.store.release_task(record.task_id, self.worker_id, self._clock())
                return
            if running.stop == "cancelled":
                error_info = TaskCancelled("cancelled by the caller").info()
            await self._finish(record, events, response=response, error=error_info)
        finally:
            with contextlib.suppress(Exception):
                await events.close()
            self._notify(record.task_id)

    async def _search(
        self, record: TaskRecord, events: EventWriter
    ) -> SearchResponse | WorkflowRun:
        return await self.sleuth.search(
            record.request,
            progress=self._progress(events, record.task_id),
            task_id=record.task_id,
            patient=True,
        )

    async def _run_workflow(
        self, record: TaskRecord, events: EventWriter
    ) -> SearchResponse | WorkflowRun:
        """Run (or resume, from its earlier attempts' checkpoints) a workflow task."""
        request = record.request
        workflow = WorkflowDefinition.model_validate(request["workflow"])
        await events.flush()  # "started" is stored before the earlier events are read
        earlier = [
            (event.kind, event.detail) for event in await self.store.task_events(record.task_id)
        ]

        async def checkpoint(kind: str, detail: dict[str, Any]) -> None:
            events.emit(kind, detail)
            self._notify(record.task_id)
            await events.flush()

        info, base_dir = run_info(record.task_id, request)
        return await WorkflowEngine(self.sleuth).run(
            workflow,
            request.get("inputs") or {},
            info,
            checkpoint,
            earlier=earlier,
            base_dir=base_dir,
            attempt=record.attempts,
        )

    def _progress(self, events: EventWriter, task_id: str) -> Callable[[str, dict[str, Any]], None]:
        def emit(kind: str, detail: dict[str, Any]) -> None:
            events.emit(kind, detail)
            self._notify(task_id)

        return emit

    async def _finish(
        self,
        record: TaskRecord,
        events: EventWriter,
        *,
        response: SearchResponse | WorkflowRun | None = None,
        error: ErrorInfo | None = None,
    ) -> None:
        if isinstance(response, WorkflowRun):
            done: dict[str, Any] = {
                "status": "success",
                "written": response.written,
                "failed": len(response.failed),
            }
        elif response is not None:
            done = {"status": "success", "results": len(response.results)}
        else:
            error = error or SearchError("the search ended without an answer").info()
            done = {"status": "failed", "error": error.code}
        await events.close()  # every progress event is stored before the task turns terminal
        # The terminal state and "done" in one atomic call: a worker that dies around it
        # leaves both or neither (and a worker that lost the lease writes neither).
        finished = await self.store.finish_task(
            record.task_id,
            self.worker_id,
            self._clock(),
            result=response.model_dump(mode="json") if response is not None else None,
            error=error.model_dump(mode="json") if error is not None else None,
            done=("done", done),
        )
        if not finished:
            log.warning("task %s was finished elsewhere; this outcome is dropped", record.task_id)

    async def _keep_lease(self, running: _Running) -> None:
        """Renew the lease while the search runs; stop it when the lease is lost or the
        caller cancelled (possibly through another process)."""
        task_id = running.record.task_id
        every = self.settings.lease_s / 3
        while True:
            await asyncio.sleep(every)
            try:
                renewed = await self.store.renew_lease(
                    task_id, self.worker_id, self._clock(), self.settings.lease_s
                )
            except Exception:
                log.exception("lease of task %s could not be renewed", task_id)
                continue
            if renewed is None:
                self._halt(running, "lease_lost")
                return
            if renewed.cancel_requested:
                self._halt(running, "cancelled")
                return
