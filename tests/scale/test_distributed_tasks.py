"""Tasks scale out and survive a dead worker: three `sleuth serve --no-workers`
replicas and two `sleuth worker` processes on one Redis, 300 tasks submitted
round-robin to the replicas, one worker killed with SIGKILL mid-run; every task
finishes exactly once, and a task's events reach a replica it was not submitted to.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx
import pytest
import redis
from fleet import Fleet, private_redis, write_config

from fault_server import FaultServer
from redis_server import namespace

TASKS = 300
LEASE_S = 2.0
POLL_S = 0.1
#: Tasks followed over SSE on a replica other than the one they were submitted to.
FOLLOWED = (150, 151, 152)


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    yield from private_redis()


@dataclass
class Followed:
    """What one SSE reader saw: (kind, seq, event time, arrival time) per event."""

    task_id: str
    base: str
    events: list[tuple[str, int, float, float]] = field(default_factory=list)
    ended: bool = False
    error: str | None = None


def follow(seen: Followed) -> None:
    try:
        with httpx.stream(
            "GET", f"{seen.base}/v1/tasks/{seen.task_id}/events", timeout=60
        ) as stream:
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[len("data: ") :])
                    at = datetime.fromisoformat(event["at"]).timestamp()
                    seen.events.append((event["kind"], event["seq"], at, time.time()))
        seen.ended = True
    except httpx.HTTPError as exc:
        seen.error = repr(exc)


def worker_of(worker_id: str | None) -> int | None:
    """The pid in a worker id (`host:pid:nonce`)."""
    return int(worker_id.rsplit(":", 2)[1]) if worker_id else None


def finished_without_done(db: redis.Redis, shard: str, ids: list[str], pid: int) -> set[str]:
    """Tasks the worker `pid` finished but had not yet said "done" for."""
    with db.pipeline(transaction=False) as pipe:
        for task_id in ids:
            pipe.hmget(f"{shard}task:{task_id}", "status", "worker")
        states = pipe.execute()
    undone = set()
    for task_id, (status, worker) in zip(ids, states, strict=True):
        if status in ("success", "failed") and worker_of(worker) == pid:
            events = db.xrange(f"{shard}events:{task_id}")
            if not any(fields["kind"] == "done" for _, fields in events):
                undone.add(task_id)
    return undone


def test_300_tasks_on_three_replicas_and_two_workers_one_killed(
    tmp_path: Path, redis_url: str
) -> None:
    ns = namespace()
    shard = f"{ns}:{{tasks:0}}:"
    db = redis.Redis.from_url(redis_url, decode_responses=True)

    def holding(pid: int) -> list[str]:
        running = db.zrange(f"{shard}running", 0, -1)
        with db.pipeline(transaction=False) as pipe:
            for task_id in running:
                pipe.hget(f"{shard}task:{task_id}", "worker")
            workers = pipe.execute()
        return [t for t, w in zip(running, workers, strict=True) if worker_of(w) == pid]

    def finished() -> int:
        return int(db.zcard(f"{shard}done:success")) + int(db.zcard(f"{shard}done:failed"))

    with FaultServer(slow_s=0.05) as provider, Fleet(tmp_path) as fleet:
        tasks = {"workers": 4, "lease_s": LEASE_S, "poll_s": POLL_S, "queue_max": 1000}
        config = write_config(tmp_path, redis_url, ns, provider.url_for("slow"), tasks=tasks)
        replicas = fleet.serve(config, 3)
        victim, survivor = fleet.workers(config, 2)
        clients = [httpx.Client(base_url=replica.base, timeout=30) for replica in replicas]

        ids: list[str] = []
        followers: list[tuple[Followed, threading.Thread]] = []
        for n in range(TASKS):
            home = n % 3
            accepted = clients[home].post(
                "/v1/tasks", json={"query": f"python release {n}", "no_cache": True}
            )
            assert accepted.status_code == 202, accepted.text
            ids.append(accepted.json()["task_id"])
            if n in FOLLOWED:  # read its events from the next replica over
                seen = Followed(ids[-1], replicas[(home + 1) % 3].base)
                reader = threading.Thread(target=follow, args=(seen,), daemon=True)
                reader.start()
                followers.append((seen, reader))

        # Kill a worker mid-run: tasks done, tasks waiting, and tasks in its hands.
        deadline = time.monotonic() + 30
        while finished() < 60 or not holding(victim.pid):
            assert time.monotonic() < deadline, (finished(), victim.output())
            time.sleep(0.005)
        os.kill(victim.pid, signal.SIGKILL)
        victim.process.wait(timeout=10)
        held = set(holding(victim.pid))  # frozen now: nobody renews, the lease still runs
        undone = finished_without_done(db, shard, ids, victim.pid)
        assert held and finished() < TASKS

        deadline = time.monotonic() + 60
        while finished() < TASKS:
            assert time.monotonic() < deadline, (finished(), survivor.output())
            time.sleep(0.1)
        for _, reader in followers:
            reader.join(timeout=10)

        final = {
            task_id: clients[n % 3].get(f"/v1/tasks/{task_id}").json()
            for n, task_id in enumerate(ids)
        }
        task_keys = list(db.scan_iter(match=f"{shard}task:*", count=1000))
        queue_left = db.zcard(f"{shard}pending") + db.zcard(f"{shard}running")
        for client in clients:
            client.close()
        db.close()

    # Every task succeeded once, with its result, and no task was made twice.
    assert len(set(ids)) == TASKS == len(final)
    failed = [(t["task_id"], t["error"]) for t in final.values() if t["status"] != "success"]
    assert not failed
    assert all(
        t["result"]["task_id"] == t["task_id"] and t["result"]["results"] for t in final.values()
    )
    assert len(task_keys) == TASKS and queue_left == 0
    done = {t["task_id"]: sum(e["kind"] == "done" for e in t["events"]) for t in final.values()}
    # One "done" each. The one exception the design allows: the kill fell between a
    # task's finish and its "done" (two store calls); then it has none (see the report).
    assert all(done[t] == (0 if t in undone else 1) for t in ids), (done, undone)
    assert len(undone) <= 1, undone

    # The dead worker's tasks ran again on the other (attempt 2); the rest ran once.
    attempts = {t["task_id"]: t["attempts"] for t in final.values()}
    assert {t for t, a in attempts.items() if a == 2} == held
    assert {a for t, a in attempts.items() if t not in held} == {1}
    # Workers ran every task; the replicas (--no-workers) ran none.
    runners = {
        worker_of(e["detail"]["worker"])
        for t in final.values()
        for e in t["events"]
        if e["kind"] == "started"
    }
    assert runners == {victim.pid, survivor.pid}
    for task_id in held:
        last_start = [e for e in final[task_id]["events"] if e["kind"] == "started"][-1]
        assert worker_of(last_start["detail"]["worker"]) == survivor.pid

    # Events reach a replica the task was not submitted to, live, until "done".
    for seen, _ in followers:
        kinds = [kind for kind, *_ in seen.events]
        assert seen.ended and seen.error is None, seen
        assert kinds[0] == "accepted" and "started" in kinds and kinds[-1] == "done", kinds
        assert [seq for _, seq, *_ in seen.events] == list(range(1, len(kinds) + 1))
        lag = max(arrived - at for _, _, at, arrived in seen.events)
        assert lag < POLL_S + 1.0, f"events arrived {lag:.2f}s late on {seen.base}"
