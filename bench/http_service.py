"""Searches per second and latency through HTTP, against a real `sleuth serve`.

One `sleuth serve` process (uvicorn, one worker) on 127.0.0.1, with the six web
providers of tests/data/web.jsonl answering from replay, all recorded for one query.
The response cache is off, so every request runs the whole pipeline; a second server
with the cache on answers the same query from its (in-memory) cache after the first
search. The store is SQLite in a temporary folder. The per-provider quota is raised out
of the way: its default (50 calls/s per provider once a 1,600-call burst is spent)
would otherwise decide the figures at 64 clients, and no real provider is called.

The load comes from this process: each client is its own httpx.AsyncClient with one
keep-alive connection, sending its next search as soon as the last one is answered.
(One shared client's pool, at 64 requests in flight, opened ~100 connections for 64
clients and tripled p99, measuring itself.) Every level starts with one uncounted
search per client. Client and server share the machine's cores, so each level shows
the CPU they used and what the rest of the machine used meanwhile. Then the same
settings and request run in-process, `await Sleuth.search(...)` one after another, for
the overhead of the HTTP layer at one client.

    python bench/http_service.py [--requests 200,800,1600] [--budget 100] [--no-cache-row]

The levels stop sending once `--budget` seconds have passed since the first server
was started (and after 20 s in any one level), so a slow machine shortens the run
rather than stretching it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any, TypeVar

import httpx

from _common import (
    CASSETTE,
    CHAIN,
    HOST,
    REQUEST,
    ROOT,
    machine_busy_seconds,
    percentile,
    process_cpu_seconds,
    search,
    serving,
)
from sleuth.config import load_settings
from sleuth.gateway import Sleuth

LEVELS = (1, 16, 64)
WARMUP = 20  # sequential searches on a fresh server (or in-process) before any level
LEVEL_CAP_S = 20.0

T = TypeVar("T")


def run_loop(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run on the loop uvicorn's `loop="auto"` picks (uvloop when installed), so the
    direct searches and the server schedule their tasks alike."""
    factory: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop
    if find_spec("uvloop") is not None:
        import uvloop

        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main())


def cpu_seconds(pid: int | None = None) -> float | None:
    """CPU time (user + system): of a process from /proc (Linux), of the whole machine
    with pid 0, of this process without a pid. None where /proc is missing."""
    if pid is None:
        return time.process_time()
    used = machine_busy_seconds() if pid == 0 else process_cpu_seconds(pid)
    return None if math.isnan(used) else used


def write_config(folder: Path, cache: bool) -> Path:
    name = "on" if cache else "off"
    config = folder / f"sleuth-cache-{name}.yaml"
    config.write_text(
        f"chain: [{', '.join(CHAIN)}]\n"
        "providers: {google: {options: {cx: replayed}}}\n"
        f"store: {{backend: sqlite, path: '{folder / f'state-{name}.sqlite'}'}}\n"
        f"cache: {{enabled: {str(cache).lower()}}}\n"
        "quota: {default: {rate_per_s: 1000000, burst_per_s: 1000000}}\n",
        encoding="utf-8",
    )
    return config


@dataclass
class Level:
    label: str
    clients: int
    planned: int
    latencies_ms: list[float] = field(default_factory=list)
    #: `timings.total` of each answer: the time spent inside `Sleuth.search`.
    pipeline_ms: list[float] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    degraded: Counter[str] = field(default_factory=Counter)
    wall_s: float = math.nan
    cpu_s: dict[str, float | None] = field(default_factory=dict)
    cut: bool = False

    def note(self, body: dict[str, Any]) -> None:
        """Count an answer in which some provider did not answer, by why."""
        self.pipeline_ms.append(body["timings"]["total"])
        reasons = [d["kind"] for d in body["degradations"]] + [e["code"] for e in body["errors"]]
        if body["degraded"] or body["errors"] or not body["results"]:
            self.degraded[", ".join(sorted(set(reasons))) or "no results"] += 1

    def row(self) -> str:
        def share(who: str) -> str:
            used = self.cpu_s.get(who)
            return "-" if used is None else f"{used / self.wall_s:.0%}"

        sent = len(self.latencies_ms) + self.failures.total()
        return (
            f"{self.label:<10}{self.clients:>8}{sent:>10}{self.failures.total():>8}"
            f"{self.degraded.total():>10}{len(self.latencies_ms) / self.wall_s:>12.1f}"
            f"{percentile(self.latencies_ms, 0.5):>9.2f}"
            f"{percentile(self.latencies_ms, 0.99):>9.2f}"
            f"{share('server'):>8}{share('client'):>8}{share('others'):>8}"
            + (" (cut by --budget)" if self.cut else "")
        )


async def drive(
    clients: list[httpx.AsyncClient], level: Level, stop_at: float, server_pid: int
) -> Level:
    """`level.clients` closed-loop clients send `level.planned` searches between them."""
    issued = 0

    async def one_client(client: httpx.AsyncClient) -> None:
        nonlocal issued
        while issued < level.planned:
            if time.perf_counter() > stop_at:
                level.cut = True
                return
            issued += 1
            answered = await search(client, REQUEST, level.failures)
            if answered is not None:
                level.latencies_ms.append(answered[0])
                level.note(answered[1])

    before = {"server": cpu_seconds(server_pid), "client": cpu_seconds(), "all": cpu_seconds(0)}
    started = time.perf_counter()
    await asyncio.gather(*(one_client(client) for client in clients[: level.clients]))
    level.wall_s = time.perf_counter() - started
    after = {"server": cpu_seconds(server_pid), "client": cpu_seconds(), "all": cpu_seconds(0)}
    for who, was in before.items():
        now = after[who]
        level.cpu_s[who] = None if was is None or now is None else now - was
    server, client, everyone = (level.cpu_s[who] for who in ("server", "client", "all"))
    if server is not None and client is not None and everyone is not None:
        level.cpu_s["others"] = max(0.0, everyone - server - client)
    return level


async def load(
    base: str, server_pid: int, label: str, counts: list[int], stop_at: float
) -> tuple[list[Level], float]:
    """The levels against one server, and its GET /healthz round trip (p50 ms)."""
    async with AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(base_url=base, timeout=30, limits=httpx.Limits(max_connections=1))
            )
            for _ in range(max(LEVELS))
        ]
        for _ in range(WARMUP):  # the first search reads the cassette
            (await clients[0].post("/v1/search", json=REQUEST)).raise_for_status()
        health = []
        for _ in range(200):
            started = time.perf_counter()
            (await clients[0].get("/healthz")).raise_for_status()
            health.append((time.perf_counter() - started) * 1000)
        levels = []
        for clients_n, count in zip(LEVELS, counts, strict=True):
            # One uncounted search per client: a connection idle past uvicorn's
            # keep-alive (5 s) is reopened here, not in the figures.
            await asyncio.gather(*(c.post("/v1/search", json=REQUEST) for c in clients[:clients_n]))
            level_stop = min(stop_at, time.perf_counter() + LEVEL_CAP_S)
            levels.append(
                await drive(clients, Level(label, clients_n, count), level_stop, server_pid)
            )
        return levels, statistics.median(health)


async def direct(config: Path, cassette: Path, count: int) -> Level:
    """The same search in-process, one after another: no HTTP, no JSON either way."""
    level = Level("direct", 1, count)
    async with Sleuth(load_settings(config, replay=cassette)) as sleuth:
        for _ in range(WARMUP):
            await sleuth.search(REQUEST)
        cpu_before = time.process_time()
        begun = time.perf_counter()
        for _ in range(count):
            started = time.perf_counter()
            response = await sleuth.search(REQUEST)
            level.latencies_ms.append((time.perf_counter() - started) * 1000)
            level.note(response.model_dump(mode="json"))
        level.wall_s = time.perf_counter() - begun
        level.cpu_s["server"] = time.process_time() - cpu_before
    return level


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", default="200,800,1600", help="per level: 1, 16, 64")
    parser.add_argument("--budget", type=float, default=100.0, help="seconds for all levels")
    parser.add_argument("--no-cache-row", action="store_true", help="skip the cache-on server")
    args = parser.parse_args()
    counts = [int(n) for n in args.requests.split(",")]
    if len(counts) != len(LEVELS):
        parser.error(f"--requests needs {len(LEVELS)} counts")
    loop = "uvloop" if find_spec("uvloop") else "asyncio"
    http = "httptools" if find_spec("httptools") else "h11"

    levels: list[Level] = []
    with tempfile.TemporaryDirectory(prefix="sleuth-bench-http-") as tmp:
        folder = Path(tmp)
        cache_off, cache_on = write_config(folder, cache=False), write_config(folder, cache=True)

        print(
            f"HTTP bench: {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{platform.system()} {platform.machine()}, load average "
            f"{os.getloadavg()[0]:.1f} (a shared machine)"
        )
        print(
            f"  server   sleuth serve on {HOST}, uvicorn 1 process ({loop}, {http}), "
            "API keys off (loopback), store sqlite, quota raised"
        )
        print(
            f"  search   POST /v1/search {json.dumps(REQUEST)}; providers {', '.join(CHAIN)} "
            f"replayed from {CASSETTE.relative_to(ROOT)}"
        )
        print(
            f"  clients  this process ({loop}): one httpx.AsyncClient and connection each, "
            f"closed loop; the same {os.cpu_count()} cores as the server "
            "(CPU columns: share of one core)"
        )

        stop_at = time.perf_counter() + args.budget
        with serving(cache_off, folder / "serve-off.log", "--replay", str(CASSETTE)) as (
            base,
            pid,
        ):
            off, health_ms = run_loop(lambda: load(base, pid, "cache off", counts, stop_at))
        levels += off
        alone = run_loop(lambda: direct(cache_off, CASSETTE, counts[0]))
        if not args.no_cache_row:
            with serving(cache_on, folder / "serve-on.log", "--replay", str(CASSETTE)) as (
                base,
                pid,
            ):
                on, _ = run_loop(lambda: load(base, pid, "cache on", counts, stop_at))
            levels += on

    print(
        f"\n{'':<10}{'clients':>8}{'requests':>10}{'errors':>8}{'degraded':>10}"
        f"{'searches/s':>12}{'p50 ms':>9}{'p99 ms':>9}{'server':>8}{'client':>8}{'others':>8}"
    )
    for level in levels:
        print(level.row())
    print(alone.row() + "  (in-process: its CPU is under server)")
    for level in [*levels, alone]:
        for reason, n in [*level.failures.most_common(3), *level.degraded.most_common(3)]:
            print(f"  {level.label}, {level.clients} clients: {n} x {reason}")

    http_p50, direct_p50 = percentile(off[0].latencies_ms, 0.5), percentile(alone.latencies_ms, 0.5)
    print(
        f"\nHTTP layer at 1 client, cache off: p50 {http_p50:.2f} ms through HTTP vs "
        f"{direct_p50:.2f} ms calling Sleuth.search: +{http_p50 - direct_p50:.2f} ms, "
        f"x{http_p50 / direct_p50:.2f}"
    )
    print(
        f"  inside the server, Sleuth.search took p50 {percentile(off[0].pipeline_ms, 0.5):.2f} ms "
        f"(timings.total); an empty round trip, GET /healthz, p50 {health_ms:.2f} ms"
    )


if __name__ == "__main__":
    main()
