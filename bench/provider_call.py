"""The no-fault path of one provider call (issue 17, item 2): what the resilience
steps cost when none of them acts.

One call's build, send and parse answer at once from memory (a fixed request, a
fixed response, one hit); what is timed is `ProviderCall.run` around them (breaker
allow and record, quota acquire, retry's first attempt, the timeouts, the latency
record) and `ask_chain` of three such providers (their slots and the straggler
watch), against the bare exchange. The quota's pools are made large enough never
to refuse; the store is the memory one. The event loop runs between calls, as it
does between searches (background lease renewals and breaker flushes run then).

    python bench/provider_call.py [--calls 3000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sleuth.config import Settings
from sleuth.gateway import Sleuth
from sleuth.providers.base import HttpRequest, RawHit
from sleuth.resilience.call import Exchange, ProviderCall, ask_chain
from sleuth.transport import RawResponse

CHAIN = ["searxng", "wikipedia", "local"]
REQUEST = HttpRequest(method="GET", url="https://search.example/s?q=x")
RESPONSE = RawResponse(200, {"content-type": "application/json"}, {"results": []})
HITS = [RawHit(url="https://a.example/", title="t", snippet="s")]


async def send(request: HttpRequest, timeout_s: float) -> RawResponse:
    return RESPONSE


EXCHANGE = Exchange(build=lambda: REQUEST, send=send, parse=lambda _: HITS, timeout_s=5.0)


async def timed(make: Callable[[], Awaitable[Any]], calls: int, rounds: int) -> float:
    """Median over `rounds` of the microseconds per call of `calls` calls."""
    for _ in range(calls // 2):
        await make()
        await asyncio.sleep(0)
    results = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            await make()
            await asyncio.sleep(0)
        results.append((time.perf_counter() - started) / calls * 1e6)
    return statistics.median(results)


async def run(calls: int, rounds: int) -> None:
    settings = Settings(
        chain=CHAIN,
        providers={"searxng": {"enabled": True}, "wikipedia": {}, "local": {}},
        store={"backend": "memory"},
        quota={"default": {"rate_per_s": 1e9, "burst_per_s": 1e9}},
    )
    sleuth = Sleuth(settings)
    policies = sleuth._policies()

    async def bare() -> list[RawHit]:
        return EXCHANGE.parse(await EXCHANGE.send(EXCHANGE.build(), EXCHANGE.timeout_s))

    def call() -> Awaitable[Any]:
        deadline = time.perf_counter() + 10
        return ProviderCall(
            "searxng", EXCHANGE, policies, priority="normal", deadline=deadline
        ).run()

    def chain() -> Awaitable[Any]:
        deadline = time.perf_counter() + 10
        return ask_chain(
            CHAIN,
            [],
            lambda _: EXCHANGE,
            policies,
            priority="normal",
            deadline=deadline,
            deadline_s=10,
        )

    alone = await timed(bare, calls, rounds)
    one = await timed(call, calls, rounds)
    three = await timed(chain, calls, rounds) / len(CHAIN)
    await sleuth.aclose()
    print(f"no-fault provider call, median of {rounds} rounds of {calls} calls")
    print(f"  bare exchange (build, send, parse, loop pass) {alone:7.2f} us")
    print(f"  ProviderCall.run                              {one:7.2f} us  (+{one - alone:.2f})")
    print(
        f"  ask_chain of 3, per provider                  {three:7.2f} us  (+{three - alone:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    asyncio.run(run(args.calls, args.rounds))


if __name__ == "__main__":
    main()
