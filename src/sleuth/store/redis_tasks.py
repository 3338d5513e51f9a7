"""The Redis store's tasks, their queue and progress events (see `redis.py` for the
rest of the key layout, the connection and the compare-and-set of breakers and buckets).

Keys of task shard `n` (all share the hash tag `{tasks:n}`, so each script below runs
on one cluster slot; a task lives in shard crc32(task_id) % task_shards):

    ns:{tasks:n}:task:<id>        HASH  the TaskRecord (JSON in request/result/error;
                                        an absent field is None)      TTL task_ttl_s once finished
    ns:{tasks:n}:events:<id>      STREAM entry ids <seq>-0 (seq 1, 2, ...: never trimmed,
                                        so its length is the last seq): at, kind, detail
                                        TTL as its task
    ns:{tasks:n}:pending          ZSET  members "<inverted priority>|<created>|<id>", all
                                        score 0: lexicographic order is the claim order
    ns:{tasks:n}:running          ZSET  task id by lease_until
    ns:{tasks:n}:done:success     ZSET  task id by finished_at (count_tasks, expire_tasks;
    ns:{tasks:n}:done:failed            trimmed past task_ttl_s as the hashes expire)

Why sorted sets and Lua, not Streams consumer groups: a lease here is `lease_until`
on the caller's clock (`now`, as every store method takes it, which need not be
Redis's time: tests run at a fixed one). XAUTOCLAIM measures idle time on Redis's own
clock since the last delivery, so it cannot answer "whose lease ran out before `now`";
Streams have no priorities either (two streams would do) and cannot drop a cancelled
pending entry cheaply. So the queue is two sorted sets and every transition (claim,
renew, finish, release, cancel) is one Lua script that checks and changes the task
hash and the sets together, as the SQLite store's transactions do. A claim
takes the best pending task, else the task whose lease ran out first (SQLite orders
those by priority too; it makes no difference to a task that is overdue anyway).
Streams serve what they are good at: each task's progress events. A reader on any
replica waits for new ones with XREAD BLOCK (`wait_task_events`), which an XADD wakes,
so no pub/sub is needed. A batch of events is one script (APPEND), and FINISH and
CANCEL append a terminal task's "done" event in the script that makes it terminal.

Redis Cluster: a claim must pick from the queue and change the task atomically, so the
queue and its tasks share a slot. One slot for every task would not scale, so tasks
are spread over `task_shards` shards, each a queue of its own. With one shard (the
default, right for a single Redis server) a claim is one script; with several, a
claim first reads every shard's head in one pipelined round trip and claims on the
shard holding the best task (priority, then age), so the order is global except
between two claims racing for the same head. The number of shards is fixed for the
life of the data: changing it strands existing tasks.

Idempotency keys cannot share the task's slot (the task's id, hence its shard, is not
known from the key), so `ns:{idem:<sha256(tenant, key)>}` is claimed first with a
set-if-absent script, then the task is created. A key whose task never appears (its
creator died between the two steps) is taken over after a short wait. The key expires
with its task (`task_ttl_s` after the task finished) and is deleted by `expire_tasks`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import zlib
from collections.abc import Mapping, Sequence
from typing import Any, cast

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from sleuth.store import redis_lua as lua
from sleuth.store.base import (
    TERMINAL,
    EventRecord,
    NewEvent,
    TaskRecord,
    TaskState,
    done_events,
    finished_status,
)
from sleuth.store.redis_lua import Script, pairs

__all__ = ["RedisTasks"]

_PRIORITY_SPAN = 10**9
_ORPHAN_WAITS = 5
_ORPHAN_WAIT_S = 0.02
_EXPIRE_BATCH = 500


class RedisTasks:
    """`TaskStore` over the store's client (`_eval`, `_pipeline` come from `RedisStore`)."""

    _redis: Redis | RedisCluster
    _ns: str
    _shards: int
    _task_ttl_ms: int
    _task_ttl_s: float

    async def _eval(self, script: Script, keys: Sequence[str], args: Sequence[Any]) -> Any:
        raise NotImplementedError

    async def _pipeline(self, calls: Sequence[tuple[Any, ...]]) -> list[Any]:
        raise NotImplementedError

    def _shard(self, n: int) -> str:
        return f"{self._ns}:{{tasks:{n}}}:"

    def _base(self, task_id: str) -> str:
        return self._shard(zlib.crc32(task_id.encode()) % self._shards)

    def _idem(self, tenant: str, key: str) -> str:
        digest = hashlib.sha256(json.dumps([tenant, key]).encode()).hexdigest()
        return f"{self._ns}:{{idem:{digest}}}"

    async def create_task(
        self, record: TaskRecord, first: NewEvent | None = None
    ) -> tuple[TaskRecord, bool]:
        events = [first] if first is not None else []
        if record.idempotency_key is None:
            await self._insert(record, events)
            return record, True
        idem = self._idem(record.tenant, record.idempotency_key)
        orphan, waits = "", 0
        while True:
            holder = await self._eval(lua.IDEM_CLAIM, [idem], [record.task_id, orphan])
            if holder is None:
                await self._insert(record, events)
                return record, True
            existing = await self.get_task(holder)
            if existing is not None:
                return existing, False
            # The holder's creator is between its two steps, or died there.
            waits += 1
            if waits > _ORPHAN_WAITS:
                orphan = holder
            else:
                await asyncio.sleep(_ORPHAN_WAIT_S)

    async def _insert(self, record: TaskRecord, events: Sequence[NewEvent] = ()) -> None:
        base = self._base(record.task_id)
        keys = [f"{base}task:{record.task_id}", f"{base}pending", f"{base}running"]
        keys += [f"{base}done:success", f"{base}done:failed", f"{base}events:{record.task_id}"]
        fields = _task_fields(record)
        args: list[Any] = [record.task_id, record.status, _queue_member(record)]
        args += [repr(record.lease_until or 0.0), repr(record.finished_at or 0.0)]
        args += [self._task_ttl_ms, len(fields), *fields, *_event_args(events)]
        if not await self._eval(lua.CREATE, keys, args):
            raise ValueError(f"a task {record.task_id!r} exists already")

    async def get_task(self, task_id: str) -> TaskRecord | None:
        found = await self._redis.execute_command("HGETALL", f"{self._base(task_id)}task:{task_id}")
        return _task(found) if found else None

    async def claim_task(self, worker: str, now: float, lease_s: float) -> TaskRecord | None:
        args = [repr(now), repr(now + lease_s), worker]
        if self._shards == 1:
            return await self._claim_on(0, args)
        # Each lap either claims or finds that another claim took the head it saw; after
        # this many lost races it answers None, and the worker simply polls again.
        for _ in range(4 * self._shards + 4):
            shard = await self._best_shard(now)
            if shard is None:
                return None
            claimed = await self._claim_on(shard, args)
            if claimed is not None:
                return claimed
        return None

    async def _claim_on(self, shard: int, args: list[str]) -> TaskRecord | None:
        base = self._shard(shard)
        found = await self._eval(lua.CLAIM, [f"{base}pending", f"{base}running"], [base, *args])
        return _task(pairs(found)) if found else None

    async def _best_shard(self, now: float) -> int | None:
        heads: list[tuple[Any, ...]] = []
        for n in range(self._shards):
            base = self._shard(n)
            heads.append(("ZRANGE", f"{base}pending", "-", "+", "BYLEX", "LIMIT", 0, 1))
            heads.append(
                ("ZRANGE", f"{base}running", "-inf", f"({now!r}", "BYSCORE", "LIMIT", 0, 1)
            )
        found = await self._pipeline(heads)
        pending = [(head[0], n) for n, head in enumerate(found[::2]) if head]
        if pending:
            return min(pending)[1]
        return next((n for n, expired in enumerate(found[1::2]) if expired), None)

    async def renew_lease(
        self, task_id: str, worker: str, now: float, lease_s: float
    ) -> TaskRecord | None:
        base = self._base(task_id)
        keys = [f"{base}task:{task_id}", f"{base}running"]
        found = await self._eval(lua.RENEW, keys, [task_id, worker, repr(now), repr(now + lease_s)])
        return _task(pairs(found)) if found else None

    async def finish_task(
        self,
        task_id: str,
        worker: str,
        now: float,
        *,
        result: Mapping[str, Any] | None = None,
        error: Mapping[str, Any] | None = None,
        done: tuple[str, Mapping[str, Any]] | None = None,
    ) -> bool:
        status = finished_status(error)
        base = self._base(task_id)
        keys = [f"{base}task:{task_id}", f"{base}running", f"{base}done:{status}"]
        keys.append(f"{base}events:{task_id}")
        fields: list[str] = []
        if result is not None:
            fields += ["result", _dumps(result)]
        if error is not None:
            fields += ["error", _dumps(error)]
        args: list[Any] = [task_id, worker, repr(now), status, self._task_ttl_ms]
        args += [repr(now - self._task_ttl_s), len(fields), *fields]
        args += _event_args(done_events(done, now))
        found = await self._eval(lua.FINISH, keys, args)
        if not found:
            return False
        tenant, idempotency_key = found
        if idempotency_key is not None:
            await self._end_idempotency(task_id, tenant, idempotency_key, self._task_ttl_ms)
        return True

    async def _end_idempotency(self, task_id: str, tenant: str, key: str, ttl_ms: int) -> None:
        await self._eval(lua.IDEM_END, [self._idem(tenant, key)], [task_id, ttl_ms])

    async def release_task(self, task_id: str, worker: str, now: float) -> bool:
        base = self._base(task_id)
        keys = [f"{base}task:{task_id}", f"{base}running", f"{base}pending"]
        return bool(await self._eval(lua.RELEASE, keys, [task_id, worker, repr(now)]))

    async def cancel_task(
        self,
        task_id: str,
        error: Mapping[str, Any],
        now: float,
        *,
        done: tuple[str, Mapping[str, Any]] | None = None,
    ) -> TaskRecord | None:
        base = self._base(task_id)
        keys = [f"{base}task:{task_id}", f"{base}pending", f"{base}done:failed"]
        keys.append(f"{base}events:{task_id}")
        args: list[Any] = [task_id, repr(now), _dumps(error), self._task_ttl_ms]
        args += _event_args(done_events(done, now))
        found = await self._eval(lua.CANCEL, keys, args)
        if not found:
            return None
        task = _task(pairs(found))
        if task.status in TERMINAL and task.idempotency_key is not None:
            await self._end_idempotency(
                task_id, task.tenant, task.idempotency_key, self._task_ttl_ms
            )
        return task

    async def append_event(
        self, task_id: str, kind: str, detail: Mapping[str, Any], at: float
    ) -> int:
        return (await self.append_events(task_id, [(kind, detail, at)]))[0]

    async def append_events(self, task_id: str, events: Sequence[NewEvent]) -> list[int]:
        if not events:
            return []
        base = self._base(task_id)
        keys = [f"{base}events:{task_id}", f"{base}task:{task_id}"]
        seqs = await self._eval(lua.APPEND, keys, [self._task_ttl_ms, *_event_args(events)])
        return [int(seq) for seq in seqs]

    async def task_events(self, task_id: str, after: int = 0) -> list[EventRecord]:
        key = f"{self._base(task_id)}events:{task_id}"
        return _events(await self._redis.execute_command("XRANGE", key, f"{after + 1}-0", "+"))

    async def wait_task_events(
        self, task_id: str, after: int = 0, timeout_s: float = 1.0
    ) -> list[EventRecord]:
        # XREAD BLOCK: an XADD from any replica wakes it.
        key = f"{self._base(task_id)}events:{task_id}"
        block_ms = max(1, round(timeout_s * 1000))
        read = await self._redis.execute_command(
            "XREAD", "BLOCK", block_ms, "STREAMS", key, f"{after}-0"
        )
        if not read:
            return []
        streams = read.values() if isinstance(read, Mapping) else [entries for _, entries in read]
        return [event for entries in streams for event in _events(entries)]

    async def count_tasks(self, status: str) -> int:
        if status not in ("pending", "running", *TERMINAL):
            return 0
        where = status if status in ("pending", "running") else f"done:{status}"
        counts = await self._pipeline(
            [("ZCARD", self._shard(n) + where) for n in range(self._shards)]
        )
        return sum(int(count) for count in counts)

    async def expire_tasks(self, finished_before: float) -> int:
        removed = 0
        for n in range(self._shards):
            base = self._shard(n)
            keys = [f"{base}done:success", f"{base}done:failed"]
            while True:
                found = await self._eval(
                    lua.EXPIRE, keys, [base, repr(finished_before), _EXPIRE_BATCH]
                )
                removed += int(found[0])
                keyed = found[2:]
                for at in range(0, len(keyed), 3):
                    task_id, tenant, key = keyed[at : at + 3]
                    await self._end_idempotency(task_id, tenant, key, 0)
                if not int(found[1]):
                    break
        return removed


def _dumps(value: Mapping[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False)


def _event_args(events: Sequence[NewEvent]) -> list[str]:
    """Events as the scripts' arguments: at, kind, detail JSON each."""
    return [part for kind, detail, at in events for part in (repr(at), kind, _dumps(detail))]


def _queue_member(record: TaskRecord) -> str:
    """Sorts (as bytes) highest priority first, then oldest: the claim order."""
    priority = max(-_PRIORITY_SPAN + 1, min(_PRIORITY_SPAN - 1, record.priority))
    return f"{_PRIORITY_SPAN - priority:010d}|{max(0.0, record.created_at):020.6f}|{record.task_id}"


def _task_fields(record: TaskRecord) -> list[str]:
    fields: dict[str, str | None] = {
        "id": record.task_id,
        "tenant": record.tenant,
        "status": record.status,
        "request": _dumps(record.request),
        "priority": str(record.priority),
        "created": repr(record.created_at),
        "updated": repr(record.updated_at),
        "attempts": str(record.attempts),
        "cancel": str(int(record.cancel_requested)),
        "qm": _queue_member(record),
        "started": _opt(record.started_at),
        "finished": _opt(record.finished_at),
        "result": _dumps(record.result) if record.result is not None else None,
        "error": _dumps(record.error) if record.error is not None else None,
        "worker": record.worker,
        "lease": _opt(record.lease_until),
        "idem": record.idempotency_key,
    }
    return [part for name, value in fields.items() if value is not None for part in (name, value)]


def _opt(value: float | None) -> str | None:
    return None if value is None else repr(value)


def _float(value: str | None) -> float | None:
    return None if value is None else float(value)


def _json(value: str | None) -> dict[str, Any] | None:
    return None if value is None else dict(json.loads(value))


def _task(h: Mapping[str, str]) -> TaskRecord:
    return TaskRecord(
        task_id=h["id"],
        tenant=h["tenant"],
        request=json.loads(h["request"]),
        status=cast(TaskState, h["status"]),  # only this store's scripts write it
        created_at=float(h["created"]),
        updated_at=float(h["updated"]),
        started_at=_float(h.get("started")),
        finished_at=_float(h.get("finished")),
        result=_json(h.get("result")),
        error=_json(h.get("error")),
        attempts=int(h["attempts"]),
        worker=h.get("worker"),
        lease_until=_float(h.get("lease")),
        cancel_requested=h.get("cancel") == "1",
        idempotency_key=h.get("idem"),
        priority=int(h["priority"]),
    )


def _events(entries: Sequence[tuple[str, Mapping[str, str]]]) -> list[EventRecord]:
    return [
        EventRecord(int(entry_id.split("-")[0]), float(f["at"]), f["kind"], json.loads(f["detail"]))
        for entry_id, f in entries
    ]
