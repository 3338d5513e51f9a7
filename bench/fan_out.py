"""What the resilience steps cost a search that needs none of them.

Three providers answer at once from memory (no sockets, a trivial parser), through
`ask_chain` with the real policies over the SQLite store sleuth uses by default:
breaker closed, quota plenty (the pools are set far above the rate of the run), no
retry, no backup, no straggler. The floor is the same
three exchanges (build, send, parse) under a bare `asyncio.gather`. What is left is
the price of the steps on the no-fault path; the issue's target (issue 17, item 2) is
a few microseconds per call. Printed as wall-clock medians (what a search waits) and
as CPU per search over a block of each (what the machine pays, the store's thread
hops included).

    python bench/fan_out.py [--searches 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from _common import percentile
from sleuth.providers.base import HttpRequest, RawHit
from sleuth.resilience.breaker import Breaker, BreakerSettings
from sleuth.resilience.call import Exchange, Policies, ask_chain
from sleuth.resilience.hedge import LatencyTracker
from sleuth.resilience.quota import PoolSettings, Quota, QuotaSettings
from sleuth.resilience.rules import RuleBook, RulesSettings
from sleuth.store import SqliteStore
from sleuth.transport import RawResponse

PROVIDERS = ["brave", "tavily", "exa"]
HITS = [RawHit(url=f"https://example.org/{i}", title=f"t{i}", snippet="s") for i in range(10)]
RESPONSE = RawResponse(200, {"content-type": "application/json"}, {"results": []})


def exchange(name: str) -> Exchange:
    async def send(request: HttpRequest, timeout_s: float) -> RawResponse:
        return RESPONSE

    return Exchange(
        build=lambda: HttpRequest("GET", f"https://{name}.example/search"),
        send=send,
        parse=lambda response: list(HITS),
        timeout_s=5.0,
    )


async def bare(exchanges: dict[str, Exchange]) -> None:
    async def one(ex: Exchange) -> list[RawHit]:
        return ex.parse(await ex.send(ex.build(), ex.timeout_s))

    await asyncio.gather(*(one(exchanges[name]) for name in PROVIDERS))


async def run(searches: int) -> None:
    exchanges = {name: exchange(name) for name in PROVIDERS}
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteStore(Path(folder) / "state.sqlite")
        policies = Policies(
            rules=RuleBook.from_settings(RulesSettings()),
            breaker=Breaker(store, BreakerSettings()),
            # Tokens to spare: a pool that ran short would make the run wait for them.
            quota=Quota(store, QuotaSettings(default=PoolSettings(rate_per_s=1e6))),
            latency=LatencyTracker(),
        )

        async def chain() -> None:
            outcomes, _ = await ask_chain(
                PROVIDERS,
                [],
                exchanges.__getitem__,
                policies,
                priority="normal",
                deadline=time.perf_counter() + 3.0,
                deadline_s=3.0,
                want_results=10,
            )
            assert all(outcome.status == "ok" for outcome in outcomes)  # noqa: S101

        figures: dict[str, list[float]] = {"bare": [], "ask_chain": []}
        for _ in range(200):  # warm-up: the store's tables, the breakers' first reads
            await chain()
        for _ in range(searches):
            for name, step in (("bare", bare(exchanges)), ("ask_chain", chain())):
                started = time.perf_counter()
                await step
                figures[name].append((time.perf_counter() - started) * 1e6)
        # CPU in blocks of one kind: the process's time, the store's threads included
        # (a quota lease or a breaker write costs a thread hop the wall median hides).
        cpu: dict[str, float] = {}
        for name, make in (("bare", lambda: bare(exchanges)), ("ask_chain", chain)):
            started = time.process_time()
            for _ in range(searches):
                await make()
            cpu[name] = (time.process_time() - started) / searches * 1e6
        await policies.breaker.aclose()
        await store.aclose()
    floor = statistics.median(figures["bare"])
    print(f"fan-out of 3 instant providers, {searches} searches (µs per search)")
    for name, values in figures.items():
        print(
            f"  {name:9s}  median {statistics.median(values):8.1f}   "
            f"p99 {percentile(values, 0.99):8.1f}"
        )
    added = statistics.median(figures["ask_chain"]) - floor
    print(f"  resilience steps: {added:.1f} µs per search, {added / 3:.1f} µs per call")
    extra = cpu["ask_chain"] - cpu["bare"]
    print(
        f"  CPU per search: bare {cpu['bare']:.1f} µs, ask_chain {cpu['ask_chain']:.1f} µs; "
        f"resilience steps {extra:.1f} µs per search, {extra / 3:.1f} µs per call"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searches", type=int, default=5000)
    asyncio.run(run(parser.parse_args().searches))


if __name__ == "__main__":
    main()
