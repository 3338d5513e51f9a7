"""Searches against back ends that fail at random, go down, or are never the problem.

A real `sleuth serve` (one process, SQLite store, cache off, default resilience
settings) with three web providers in its chain, Brave, Tavily and Exa, each in its
own wire format, answered by the fault-injecting loopback back end of
`../shared/tools/faultback.py` (50 ms a call; with probability FAULT_RATE a call
instead gets, uniformly, a 503, a 429 with `Retry-After: 1`, a 10 s hang, malformed
JSON served as 200, a CAPTCHA page served as 200, or a connection reset). Every
search has a query never sent before. Three scenarios:

- `soak`: `--searches` (2,000) searches at `--concurrency` (8), `--fault-rate` (0.2)
  on every provider;
- `outage`: Exa alone on a back end of its own that is stopped for `--outage-s`
  (60 s, connections refused) and then started again, under a steady load: how many
  Exa calls went out before its breaker rested it, how long after the outage began
  that was, and how long after the back end came back Exa served again;
- `overload`: 64 clients on healthy back ends: breaker openings must be 0 and no
  answer later than the deadline + 0.2 s.

Breaker openings are counted by polling `/metrics` (`sleuth_breaker_state`) every
0.25 s; an opening lasts at least several seconds, so none is missed.

    python bench/soak.py [--scenarios soak,outage,overload] [--searches 2000]
        [--concurrency 8] [--fault-rate 0.2] [--outage-s 60] [--config-extra YAML]
        [--backend PATH]

`--config-extra` is appended to the generated sleuth.yaml (e.g. `breaker: {enabled:
false}`) to compare settings.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import httpx

from _common import HOST, ROOT, free_port, percentile, serving, stop

CHAIN = ("brave", "tavily", "exa")
PATHS = {"brave": "/res/v1/web/search", "tavily": "/search", "exa": "/exa/search"}
BACKEND = ROOT.parent / "shared" / "tools" / "faultback.py"
DEADLINE_S = 3.0  # sleuth's default `deadline_s`, which the generated config keeps
KEY = {"SOAK_DUMMY_KEY": "dummy"}  # every provider's api_key_env; the back end ignores it
WORDS = ("install", "configure", "compare", "history", "price", "review", "guide", "error")


def queries() -> Iterator[str]:
    """Queries never sent before in this run (the cache is off anyway)."""
    for n in itertools.count():
        yield f"{WORDS[n % len(WORDS)]} topic {n} {os.getpid()}"


@contextmanager
def backend(script: Path, port: int, fault_rate: float, seed: int, log: Path) -> Iterator[None]:
    env = {**os.environ, "FAKEBACK_SEED": str(seed)}
    with log.open("ab") as out:
        process = subprocess.Popen(  # noqa: S603
            [sys.executable, str(script), str(port), "50", str(fault_rate)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                httpx.get(f"http://{HOST}:{port}/stats", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit(f"the back end on port {port} did not start") from None
                time.sleep(0.05)
        yield
    finally:
        stop([process], timeout_s=5)


def write_config(folder: Path, ports: dict[str, int], extra: str) -> Path:
    providers = ", ".join(
        f"{name}: {{base_url: 'http://{HOST}:{ports[name]}{PATHS[name]}', "
        "api_key_env: SOAK_DUMMY_KEY}"
        for name in CHAIN
    )
    config = folder / "sleuth.yaml"
    config.write_text(
        f"chain: [{', '.join(CHAIN)}]\n"
        f"providers: {{{providers}}}\n"
        f"store: {{backend: sqlite, path: '{folder / 'state.sqlite'}'}}\n"
        f"kb: {{path: '{folder / 'kb.sqlite'}'}}\n"
        "cache: {enabled: false}\n"
        f"egress: {{allow_private: ['{HOST}']}}\n" + extra + "\n",
        encoding="utf-8",
    )
    return config


@dataclass
class Search:
    started: float  # time.monotonic()
    latency_s: float
    status: int
    body: dict[str, Any] | None


@dataclass
class Run:
    searches: list[Search] = field(default_factory=list)
    openings: Counter[str] = field(default_factory=Counter)
    backend_calls: int = 0

    def answered(self) -> list[tuple[Search, dict[str, Any]]]:
        return [(s, s.body) for s in self.searches if s.body is not None]

    def report(self, label: str) -> None:
        sent = len(self.searches)
        ok = self.answered()
        with_results = sum(1 for _, body in ok if body["results"])
        degraded = sum(1 for _, body in ok if body["degraded"])
        errors_5xx = sum(1 for s in self.searches if s.status >= 500)
        other = Counter(s.status for s in self.searches if s.status != 200)
        latencies = [s.latency_s for s in self.searches]
        late = sum(1 for v in latencies if v > DEADLINE_S + 0.2)
        print(f"\n== {label}: {sent} searches")
        print(f"with results       {with_results / sent:8.1%}  ({with_results}/{sent})")
        print(f"degraded           {degraded / sent:8.1%}")
        print(f"non-200 answers    {sent - len(ok):8d}  5xx: {errors_5xx}  {dict(other) or ''}")
        print(
            "latency s          "
            f"p50 {percentile(latencies, 0.5):.3f}  p95 {percentile(latencies, 0.95):.3f}  "
            f"p99 {percentile(latencies, 0.99):.3f}  max {max(latencies):.3f}"
        )
        print(f"past deadline+0.2s {late:8d}")
        inside = [body["timings"]["total"] / 1000 for _, body in ok]
        print(
            "inside sleuth s    "  # from Sleuth.search's start: HTTP parsing and sending left out
            f"p50 {percentile(inside, 0.5):.3f}  p99 {percentile(inside, 0.99):.3f}  "
            f"max {max(inside, default=math.nan):.3f}"
        )
        openings = ", ".join(f"{p} {self.openings[p]}" for p in CHAIN)
        print(f"breaker openings   {openings}")
        if self.backend_calls:
            print(f"back-end calls     {self.backend_calls / sent:8.2f} per search")
        reasons: Counter[str] = Counter()
        for _, body in ok:
            for step in body["degradations"]:
                reasons[step["kind"]] += 1
        print(f"degradations       {dict(reasons.most_common())}")
        why: Counter[str] = Counter()
        for _, body in ok:
            for step in body["degradations"]:
                if step["kind"] == "breaker_open":  # "circuit open (WHY); next probe in ..."
                    why[step["reason"].split("(", 1)[-1].split(");", 1)[0]] += 1
        if why:
            print(f"why breakers opened {dict(why.most_common(4))} (searches skipping)")


async def watch_breakers(base: str, run: Run, stop_event: asyncio.Event) -> None:
    """Count each provider's transitions into `open`, from /metrics."""
    was: dict[str, str] = defaultdict(lambda: "0")
    async with httpx.AsyncClient(base_url=base, timeout=2) as client:
        while not stop_event.is_set():
            try:
                text = (await client.get("/metrics")).text
            except httpx.HTTPError:
                text = ""
            for line in text.splitlines():
                if line.startswith("sleuth_breaker_state{"):
                    provider = line.split('provider="', 1)[1].split('"', 1)[0]
                    value = line.rsplit(" ", 1)[1].split(".")[0]
                    if value == "2" and was[provider] != "2":
                        run.openings[provider] += 1
                    was[provider] = value
            with suppress(TimeoutError):
                await asyncio.wait_for(stop_event.wait(), 0.25)


async def one(client: aiohttp.ClientSession, base: str, query: str) -> Search:
    started = time.monotonic()
    try:
        request = {"query": query, "no_cache": True}
        async with client.post(f"{base}/v1/search", json=request) as answer:
            status = answer.status
            body = await answer.json() if status == 200 else None
    except (aiohttp.ClientError, TimeoutError):
        status, body = 599, None  # the connection broke: counted as a 5xx
    return Search(started, time.monotonic() - started, status, body)


async def load(
    base: str,
    run: Run,
    *,
    searches: int | None,
    concurrency: int,
    until: float | None = None,
) -> None:
    """`concurrency` closed-loop clients, each with its own connection, until
    `searches` are sent or the monotonic time `until` passes."""
    names = queries()
    sent = 0

    async def client_loop() -> None:
        nonlocal sent
        # aiohttp, one connection a client: a load generator must cost little CPU,
        # as it shares the cores with the server (httpx took ~3 ms a request).
        connector = aiohttp.TCPConnector(limit=1)
        timeout = aiohttp.ClientTimeout(total=30)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as client:
            while (searches is None or sent < searches) and (
                until is None or time.monotonic() < until
            ):
                sent += 1
                run.searches.append(await one(client, base, next(names)))

    stop_event = asyncio.Event()
    watcher = asyncio.create_task(watch_breakers(base, run, stop_event))
    await asyncio.gather(*(client_loop() for _ in range(concurrency)))
    stop_event.set()
    await watcher


def calls_served(port: int) -> int:
    return int(httpx.get(f"http://{HOST}:{port}/stats", timeout=2).json()["total"])


def soak(args: argparse.Namespace, folder: Path) -> None:
    port = free_port()
    with backend(args.backend, port, args.fault_rate, 1, folder / "backend.log"):
        config = write_config(folder, dict.fromkeys(CHAIN, port), args.config_extra)
        with serving(config, folder / "soak-server.log", env=KEY) as (base, _):
            run = Run()
            before = calls_served(port)
            asyncio.run(load(base, run, searches=args.searches, concurrency=args.concurrency))
            run.backend_calls = calls_served(port) - before - 1  # the /stats read itself
    label = f"soak, {args.fault_rate:.0%} faults, concurrency {args.concurrency}"
    run.report(label)


def overload(args: argparse.Namespace, folder: Path) -> None:
    port = free_port()
    with backend(args.backend, port, 0.0, 2, folder / "backend.log"):
        config = write_config(folder, dict.fromkeys(CHAIN, port), args.config_extra)
        with serving(config, folder / "overload-server.log", env=KEY) as (base, _):
            run = Run()
            asyncio.run(load(base, run, searches=args.overload_searches, concurrency=64))
    run.report("overload, healthy back ends, concurrency 64")


def outage(args: argparse.Namespace, folder: Path) -> None:
    shared, own = free_port(), free_port()
    ports = {"brave": shared, "tavily": shared, "exa": own}
    log = folder / "backend.log"
    with backend(args.backend, shared, 0.0, 3, log):
        config = write_config(folder, ports, args.config_extra)
        with serving(config, folder / "outage-server.log", env=KEY) as (base, _):
            run = Run()
            with backend(args.backend, own, 0.0, 4, log):
                asyncio.run(
                    load(base, run, searches=None, concurrency=4, until=time.monotonic() + 5)
                )
            down_at = time.monotonic()
            asyncio.run(
                load(base, run, searches=None, concurrency=4, until=down_at + args.outage_s)
            )
            with backend(args.backend, own, 0.0, 5, log):
                up_at = time.monotonic()
                asyncio.run(load(base, run, searches=None, concurrency=4, until=up_at + 60))
    run.report(f"outage: exa down for {args.outage_s:.0f} s, concurrency 4")
    during = [(s, body) for s, body in run.answered() if down_at <= s.started < up_at]
    calls = attempts = 0
    rested_after = None
    for s, body in sorted(during, key=lambda pair: pair[0].started):
        exa = body["providers"]["exa"]
        if exa["status"] == "skipped":
            rested_after = s.started - down_at
            break
        calls += 1
        attempts += exa["retries"] + 1
    back = [
        s.started - up_at
        for s, body in run.answered()
        if s.started >= up_at and body["providers"]["exa"]["status"] == "ok"
    ]
    rested = "never" if rested_after is None else f"{rested_after:.1f} s after it went down"
    print(f"exa calls before rested {calls:4d} ({attempts} attempts); rested {rested}")
    serves = f"{min(back):.1f} s" if back else "never (within 60 s)"
    print(f"exa serves again        {serves} after it came back")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default="soak,outage,overload")
    parser.add_argument("--searches", type=int, default=2000)
    parser.add_argument("--overload-searches", type=int, default=1500)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--fault-rate", type=float, default=0.2)
    parser.add_argument("--outage-s", type=float, default=60.0)
    parser.add_argument("--config-extra", default="")
    parser.add_argument("--backend", type=Path, default=BACKEND)
    args = parser.parse_args()
    if not args.backend.exists():
        raise SystemExit(f"no fault-injecting back end at {args.backend} (--backend PATH)")
    runs = {"soak": soak, "outage": outage, "overload": overload}
    with tempfile.TemporaryDirectory(prefix="sleuth-soak-") as tmp:
        for name in args.scenarios.split(","):
            folder = Path(tmp) / name
            folder.mkdir()
            runs[name](args, folder)


if __name__ == "__main__":
    main()
