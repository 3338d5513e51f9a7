"""Scale-out on one Redis: searches per second with 1, 2 and 3 replicas, and the Redis
round trips each search and each task costs.

Each replica is a sleuth HTTP service (`create_app` on uvicorn, one process, as
`sleuth serve` runs it) whose breakers, quota pools and tasks live in one private
`redis-server`; only the providers are replayed: the six web providers of
tests/data/web.jsonl (brave, google, serpapi, tavily, exa, duckduckgo; google with a
`cx`), cache off. (`sleuth serve --replay` would keep breakers and quotas in memory, so
replicas would share nothing per search; here the store is handed to the core, as in
production.) Quota limits are raised far above the load, so every take is made and
none refused.

Per level (1, 2, 3 replicas, each started afresh on a namespace of its own):

- searches: `--concurrency` closed-loop clients in this process (one httpx client
  per replica, clients spread round-robin), `POST /v1/search` for `--seconds` after a
  warm-up, at most `--searches`;
- round trips: the same load for 2 s with `redis-cli monitor` watching: every command
  a client sent (not the ones Lua scripts ran inside Redis), per search; the store
  pipelines only multi-shard reads (one shard here), so commands are round trips.
  `cmds` (per search) is INFO's total_commands_processed over the timed run, which
  counts the commands inside scripts too;
- tasks: `--tasks` `POST /v1/tasks` round-robin, run by the replicas' own workers
  (`tasks.workers` 4 each); tasks/s from the first submit to the last finish, then a
  monitored batch for round trips per task (submit, claim, events, finish).

A last reference level runs `--reference` replicas with breakers and quotas off, so
searches touch no shared state: the gap to the level above is what the shared state
costs. The replicas, this load client and Redis share the machine's cores (CPU
columns: share of one core; `machine` counts every process, ours or not), so more
replicas add throughput only while a core is idle.

    python bench/scale.py [--replicas 1,2,3] [--concurrency 16] [--seconds 6]
                          [--searches 5000] [--tasks 300] [--reference 3]

It stops by itself: each level is bounded by time and count (about a minute in all).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx
import yaml
from redis import ConnectionError as RedisConnectionError
from redis import Redis

from _common import (
    CASSETTE,
    CHAIN,
    HOST,
    REQUEST,
    ROOT,
    free_port,
    machine_busy_seconds,
    percentile,
    process_cpu_seconds,
    search,
    stop,
    wait_ready,
)
from sleuth.store import redis_lua

MONITOR_S = 2.0
MONITOR_TASKS = 40
WARMUP = 40

#: EVALSHA's first argument names the script: the store's scripts by their SHA1.
SCRIPTS = {
    getattr(redis_lua, name).sha: name
    for name in redis_lua.__all__
    if isinstance(getattr(redis_lua, name), redis_lua.Script)
}
_MONITOR_LINE = re.compile(r'^[\d.]+ \[\d+ ([^\]]+)\] "([^"]+)"(?: "([^"]*)")?')
_MONITOR_ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')
#: The record a compare-and-set is on, by its key's hash tag.
_RECORD_KIND = re.compile(r"\{(breaker|bucket):")


def zcard(db: Redis, key: str) -> int:
    return int(cast(int, db.zcard(key)))  # redis-py types sync and async calls as one


def info(db: Redis, section: str) -> dict[str, Any]:
    """INFO `section`, or CLIENT INFO for "client" (this connection's own)."""
    if section == "client":
        return cast(dict[str, Any], db.client_info())
    return cast(dict[str, Any], db.info(section))


# --- the processes -------------------------------------------------------------------


@contextmanager
def redis_server(folder: Path) -> Iterator[tuple[int, int]]:
    """A private redis-server (no persistence): (port, pid)."""
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("bench/scale.py needs redis-server (the Debian package redis-server)")
    port = free_port()
    command = [binary, "--port", str(port), "--bind", HOST, "--save", "", "--appendonly", "no"]
    server = subprocess.Popen(  # noqa: S603 - the server binary found above
        [*command, "--dir", str(folder)], stdout=subprocess.DEVNULL
    )
    client = Redis(host=HOST, port=port)
    try:
        for _ in range(200):
            try:
                client.ping()
                break
            except RedisConnectionError:
                time.sleep(0.02)
        yield port, server.pid
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=10)


def write_config(folder: Path, redis_port: int, namespace: str, *, shared: bool) -> Path:
    """The replicas' sleuth.yaml; without `shared`, breakers and quotas are off (the
    reference level: searches touch no shared state)."""
    config: dict[str, Any] = {
        "chain": CHAIN,
        "providers": {"google": {"options": {"cx": "replayed"}}},
        "replay": str(CASSETTE),
        "store": {
            "backend": "redis",
            "url": f"redis://{HOST}:{redis_port}/0",
            "namespace": namespace,
        },
        "cache": {"enabled": False},
        "kb": {"path": str(folder / "kb.sqlite")},
        # Far above the load: every take is made (its round trips counted), none refused.
        "quota": {"default": {"rate_per_s": 1e6, "burst_per_s": 1e6}, "enabled": shared},
        "breaker": {"enabled": shared},
        "tasks": {"queue_max": 100_000},
        "serve": {"shutdown_grace_s": 0, "processes": 1},
    }
    path = folder / f"{namespace}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@dataclass
class Replica:
    base: str
    process: subprocess.Popen[bytes]
    log: Path


@contextmanager
def replicas(count: int, config: Path, folder: Path) -> Iterator[list[Replica]]:
    """`count` replica processes (this script with `replica`), once /readyz answers."""
    started: list[Replica] = []
    try:
        for n in range(count):
            port = free_port()
            log = folder / f"replica-{count}-{n}.log"
            command = [sys.executable, __file__, "replica", str(config), str(port)]
            with log.open("wb") as out:
                process = subprocess.Popen(  # noqa: S603 - this script, our own arguments
                    command, stdout=out, stderr=subprocess.STDOUT
                )
            started.append(Replica(f"http://{HOST}:{port}", process, log))
        deadline = time.monotonic() + 60
        for replica in started:
            wait_ready(replica.base, replica.process, deadline, replica.log)
        yield started
    finally:
        stop([replica.process for replica in started])


def serve_replica(config: Path, port: int) -> None:
    """One replica: the HTTP service over a core whose store is Redis (see above)."""
    import uvicorn

    from sleuth.api.http import create_app
    from sleuth.config import load_settings
    from sleuth.gateway import Sleuth
    from sleuth.store import open_store

    async def main() -> None:
        settings = load_settings(config)
        store = open_store(settings.store)
        core = Sleuth(settings, store=store)
        app = create_app(settings, sleuth=core, bound_host=HOST)
        server = uvicorn.Server(
            uvicorn.Config(app, host=HOST, port=port, log_level="warning", access_log=False)
        )
        try:
            await server.serve()
        finally:
            await core.aclose()
            await store.aclose()

    try:
        import uvloop

        uvloop.run(main())
    except ImportError:
        asyncio.run(main())


# --- the load ------------------------------------------------------------------------


@dataclass
class Run:
    latencies_ms: list[float] = field(default_factory=list)
    degraded: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    wall_s: float = 0.0


async def search_load(bases: list[str], clients: int, seconds: float, most: int) -> Run:
    """`clients` closed-loop clients, spread round-robin over `bases`."""
    run = Run()
    issued = 0
    stop_at = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    pool = [httpx.AsyncClient(base_url=b, limits=limits, timeout=30) for b in bases]

    async def one(client: httpx.AsyncClient) -> None:
        nonlocal issued
        while issued < most and time.perf_counter() < stop_at:
            issued += 1
            answered = await search(client, REQUEST, run.failures)
            if answered is not None:
                elapsed_ms, body = answered
                run.latencies_ms.append(elapsed_ms)
                run.degraded += bool(body["degraded"] or body["errors"] or not body["results"])

    begun = time.perf_counter()
    try:
        await asyncio.gather(*(one(pool[k % len(pool)]) for k in range(clients)))
    finally:
        for client in pool:
            await client.aclose()
    run.wall_s = time.perf_counter() - begun
    return run


async def task_load(
    bases: list[str], clients: int, count: int, db: Redis, namespace: str
) -> tuple[float, int]:
    """Submit `count` tasks round-robin; (seconds from the first submit to the last
    finish, how many succeeded)."""
    done_keys = [f"{namespace}:{{tasks:0}}:done:success", f"{namespace}:{{tasks:0}}:done:failed"]
    before = [zcard(db, key) for key in done_keys]
    pool = [httpx.AsyncClient(base_url=b, timeout=30) for b in bases]
    queue = list(range(count))

    async def submit(client: httpx.AsyncClient) -> None:
        while queue:
            queue.pop()
            answer = await client.post("/v1/tasks", json=REQUEST)
            answer.raise_for_status()

    begun = time.perf_counter()
    try:
        await asyncio.gather(*(submit(pool[k % len(pool)]) for k in range(clients)))
    finally:
        for client in pool:
            await client.aclose()
    deadline = time.perf_counter() + 60
    while True:
        done = [zcard(db, key) - b for key, b in zip(done_keys, before, strict=True)]
        if sum(done) >= count or time.perf_counter() > deadline:
            return time.perf_counter() - begun, done[0]
        await asyncio.sleep(0.01)


# --- counting Redis commands ---------------------------------------------------------


class Commands(Counter[str]):
    """Commands by name; `lost` counts, by record kind (breaker, bucket), the
    compare-and-set scripts that found another replica's write (their retry follows)."""

    def __init__(self) -> None:
        super().__init__()
        self.lost: Counter[str] = Counter()


@contextmanager
def monitored(redis_port: int, folder: Path, ignore: str) -> Iterator[Commands]:
    """Counts the commands clients send (script-internal ones excluded, and those of
    the client at address `ignore`), by command (EVALSHA by the store's script name;
    SWAP also by the record it writes). A SWAP is lost when the script wrote nothing:
    MONITOR lists the commands a script runs (client `lua`) right after it, and a SWAP
    that won sends HSET on its key."""
    seen = Commands()
    out = folder / "monitor.txt"
    with out.open("wb") as sink:
        cli = shutil.which("redis-cli") or "redis-cli"
        monitor = subprocess.Popen(  # noqa: S603 - redis-cli from the server's package
            [cli, "-h", HOST, "-p", str(redis_port), "monitor"], stdout=sink
        )
    try:
        while b"OK" not in out.read_bytes():
            time.sleep(0.01)
        yield seen
    finally:
        time.sleep(0.2)  # let the last lines arrive
        monitor.terminate()
        monitor.wait(timeout=10)
    swap: tuple[str, str] | None = None  # the last SWAP's (command, key), until it wrote
    for line in out.read_text(encoding="utf-8", errors="replace").splitlines():
        found = _MONITOR_LINE.match(line)
        if found is None:
            continue
        client, command, first = found.groups()
        if client == "lua":  # what the script just sent ran inside Redis
            if swap is not None and command.upper() == "HSET" and first == swap[1]:
                swap = None  # it wrote: its token was the current one
            continue
        if swap is not None:
            seen.lost[swap[0]] += 1
            swap = None
        if client == ignore:
            continue
        command = command.upper()
        if command == "EVALSHA":
            command += " " + SCRIPTS.get(first or "", "?")
            if command == "EVALSHA SWAP":  # EVALSHA, sha, 1, key, token, ...
                key = _MONITOR_ARG.findall(line)[3]
                kind = _RECORD_KIND.search(key)
                command += f" ({kind.group(1) if kind else '?'})"
                swap = (command, key)
        elif command == "EVAL":
            sha = hashlib.sha1((first or "").encode(), usedforsecurity=False).hexdigest()
            command += " " + SCRIPTS.get(sha, "?")
        seen[command] += 1
    if swap is not None:
        seen.lost[swap[0]] += 1


@dataclass
class Level:
    replicas: int
    shared: bool
    search: Run
    search_rtt: Commands
    search_monitored: int
    commands: int
    cpu: dict[str, float]
    task_s: float = 0.0
    tasks_ok: int = 0
    task_rtt: Commands = field(default_factory=Commands)

    @property
    def label(self) -> str:
        return f"{self.replicas}" + ("" if self.shared else " (no breakers, no quotas)")

    def per_search(self, command: str | None = None) -> float:
        """Round trips per search (idle workers' claims left out), or of one command."""
        counted = sum(
            n for c, n in self.search_rtt.items() if c != "EVALSHA CLAIM" and command in (None, c)
        )
        return counted / max(1, self.search_monitored)

    def lost_per_search(self, command: str) -> float:
        return self.search_rtt.lost[command] / max(1, self.search_monitored)


def level(
    count: int,
    shared: bool,
    args: argparse.Namespace,
    folder: Path,
    redis: tuple[int, int],
) -> Level:
    redis_port, redis_pid = redis
    namespace = f"bench-{count}-{'shared' if shared else 'alone'}"
    config = write_config(folder, redis_port, namespace, shared=shared)
    db = Redis(host=HOST, port=redis_port, decode_responses=True)
    me = str(info(db, "client")["addr"])  # this bench's own commands are not counted
    with replicas(count, config, folder) as started:
        bases = [r.base for r in started]
        asyncio.run(search_load(bases, args.concurrency, 60, WARMUP))
        before = int(info(db, "stats")["total_commands_processed"])
        pids = {"replicas": [r.process.pid for r in started], "redis": [redis_pid]}
        cpu_before = {k: sum(process_cpu_seconds(p) for p in v) for k, v in pids.items()}
        client_before, machine_before = time.process_time(), machine_busy_seconds()
        run = asyncio.run(search_load(bases, args.concurrency, args.seconds, args.searches))
        cpu = {k: sum(process_cpu_seconds(p) for p in v) - cpu_before[k] for k, v in pids.items()}
        cpu["client"] = time.process_time() - client_before
        cpu["machine"] = machine_busy_seconds() - machine_before
        commands = int(info(db, "stats")["total_commands_processed"]) - before - 1
        with monitored(redis_port, folder, me) as search_rtt:
            probe = asyncio.run(search_load(bases, args.concurrency, MONITOR_S, args.searches))
        found = Level(
            count,
            shared,
            run,
            search_rtt,
            len(probe.latencies_ms) + probe.failures.total(),
            commands,
            {k: v / run.wall_s for k, v in cpu.items()},
        )
        if shared and args.tasks:
            found.task_s, found.tasks_ok = asyncio.run(
                task_load(bases, args.concurrency, args.tasks, db, namespace)
            )
            with monitored(redis_port, folder, me) as found.task_rtt:
                asyncio.run(task_load(bases, args.concurrency, MONITOR_TASKS, db, namespace))
    db.close()
    return found


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "replica":
        serve_replica(Path(sys.argv[2]), int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", default="1,2,3", help="replica counts to measure")
    parser.add_argument("--concurrency", type=int, default=16, help="closed-loop clients")
    parser.add_argument("--seconds", type=float, default=6.0, help="timed run per level")
    parser.add_argument("--searches", type=int, default=5000, help="at most, per level")
    parser.add_argument("--tasks", type=int, default=300, help="tasks per level (0: none)")
    parser.add_argument(
        "--reference",
        type=int,
        default=3,
        help="replicas of the reference level without breakers and quotas (0: none)",
    )
    args = parser.parse_args()
    plan = [(int(n), True) for n in args.replicas.split(",")]
    if args.reference:
        plan.append((args.reference, False))

    cores = os.cpu_count() or 1
    print(
        f"Scale-out bench: {cores} cores, shared by the replicas, this load client and Redis "
        "(CPU columns: share of one core; 'machine': every process on it, ours or not)"
    )
    print(
        "  replicas  sleuth HTTP service, 1 process each; breakers, quota pools and tasks "
        f"on one redis-server; {', '.join(CHAIN)} replayed from "
        f"{CASSETTE.relative_to(ROOT)}; cache off"
    )
    print(
        f"  load      {args.concurrency} closed-loop clients round-robin over the replicas, "
        f"POST /v1/search for {args.seconds:g} s after {WARMUP} warm-up; then {args.tasks} "
        "tasks (POST /v1/tasks, run by the replicas' workers, 4 each)"
    )
    levels: list[Level] = []
    with tempfile.TemporaryDirectory(prefix="sleuth-bench-scale-") as tmp:
        folder = Path(tmp)
        with redis_server(folder) as redis:
            for count, shared in plan:
                levels.append(level(count, shared, args, folder, redis))
                print(f"  ... {levels[-1].label} replica(s) done", flush=True)
    report(levels, args)


def report(levels: list[Level], args: argparse.Namespace) -> None:
    print(
        f"\n{'replicas':<28}{'searches':>9}{'/s':>8}{'p50 ms':>8}{'p99 ms':>8}"
        f"{'degraded':>9}{'RTT':>6}{'cmds':>6}"
        f"{'CPU: replicas':>15}{'client':>8}{'redis':>7}{'machine':>9}"
    )
    for lv in levels:
        run, cpu = lv.search, lv.cpu
        done = len(run.latencies_ms)
        print(
            f"{lv.label:<28}{done:>9}{done / run.wall_s:>8.1f}"
            f"{percentile(run.latencies_ms, 0.5):>8.1f}{percentile(run.latencies_ms, 0.99):>8.1f}"
            f"{run.degraded + run.failures.total():>9}{lv.per_search():>6.1f}"
            f"{lv.commands / max(1, done):>6.1f}"
            f"{cpu['replicas']:>15.0%}{cpu['client']:>8.0%}{cpu['redis']:>7.0%}"
            f"{cpu['machine']:>9.0%}"
        )
    print(
        "  RTT: Redis round trips per search (commands clients sent, from MONITOR); "
        "cmds: INFO total_commands_processed per search (commands inside Lua scripts too)"
    )
    shared = [lv for lv in levels if lv.shared]
    if args.tasks:
        print(f"\n{'replicas':<28}{'tasks':>9}{'ok':>8}{'tasks/s':>9}{'RTT/task':>10}")
        for lv in shared:
            per_task = sum(lv.task_rtt.values()) / MONITOR_TASKS
            print(
                f"{lv.label:<28}{args.tasks:>9}{lv.tasks_ok:>8}{args.tasks / lv.task_s:>9.1f}"
                f"{per_task:>10.1f}"
            )
    print()
    for lv in shared:
        parts = []
        for kind, meaning in (("breaker", "breaker records"), ("bucket", "quota takes")):
            command = f"EVALSHA SWAP ({kind})"
            swaps, lost = lv.per_search(command), lv.lost_per_search(command)
            parts.append(f"{swaps - lost:.1f} {meaning} + {lost:.1f} retries")
        print(
            f"{lv.replicas} replica(s), compare-and-set scripts per search: "
            + ", ".join(parts)
            + " (a retry: another replica wrote the record first)"
        )
    last = shared[-1]
    print(f"\nRound trips per search with {last.replicas} replica(s), by command:")
    for command in sorted(last.search_rtt, key=lambda c: -last.search_rtt[c]):
        if command != "EVALSHA CLAIM":
            print(f"  {command:<22}{last.per_search(command):>6.2f}")
    if args.tasks:
        print(f"Round trips per task with {last.replicas} replica(s), by command:")
        for command, n in sorted(last.task_rtt.items(), key=lambda item: -item[1]):
            print(f"  {command:<22}{n / MONITOR_TASKS:>6.2f}")
    for lv in levels:
        for reason, n in lv.search.failures.most_common(3):
            print(f"  {lv.label} replica(s): {n} x {reason}")


if __name__ == "__main__":
    main()
