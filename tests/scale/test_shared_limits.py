"""Replicas on one Redis share quota pools and circuit breakers: three `sleuth serve`
processes draw from one 10/s pool and together stay within it, and a breaker one of
them opens stops the others from calling the provider within `breaker.read_cache_s`,
well within a second."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fleet import Fleet, private_redis, write_config

from fault_server import FaultServer
from redis_server import namespace
from sleuth.resilience.breaker import BreakerSettings
from sleuth.resilience.quota import PoolSettings

#: One pool: 10 calls/s sustained; burst_window_s 0 makes it the plain token bucket,
#: which holds `burst_per_s` tokens and grants at most burst + rate * t over t seconds.
#: Small enough that three replicas press on it even on a loaded machine (at load 9,
#: they answered 41 searches a second, under a 50/s pool: nothing was refused).
POOL = PoolSettings(rate_per_s=10, burst_per_s=20, burst_window_s=0)
LOAD_S = 10.0
CLIENTS_PER_REPLICA = 8


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    yield from private_redis()


async def hammer(bases: list[str], seconds: float) -> tuple[float, list[dict[str, Any]]]:
    """Closed-loop searches on every replica for `seconds`; (span, answers), the span
    from the first request sent to the last answer received."""
    answers: list[dict[str, Any]] = []
    stop_at = time.monotonic() + seconds

    async def client_loop(client: httpx.AsyncClient, who: int) -> None:
        n = 0
        while time.monotonic() < stop_at:
            n += 1
            body = {"query": f"quota pool {who} {n}", "no_cache": True}
            answer = await client.post("/v1/search", json=body)
            assert answer.status_code == 200, answer.text
            answers.append(answer.json())

    clients = [httpx.AsyncClient(base_url=base, timeout=30) for base in bases]
    started = time.time()
    try:
        await asyncio.gather(
            *(
                client_loop(client, n * CLIENTS_PER_REPLICA + k)
                for n, client in enumerate(clients)
                for k in range(CLIENTS_PER_REPLICA)
            )
        )
    finally:
        for client in clients:
            await client.aclose()
    return time.time() - started, answers


async def test_three_replicas_share_one_quota_pool(tmp_path: Path, redis_url: str) -> None:
    with FaultServer() as provider, Fleet(tmp_path) as fleet:
        quota = {"pools": {"searxng": POOL.model_dump()}}
        config = write_config(tmp_path, redis_url, namespace(), provider.url_for("ok"), quota=quota)
        replicas = fleet.serve(config, 3)
        span_s, answers = await hammer([replica.base for replica in replicas], LOAD_S)
        calls = len(provider.requests)

    # Every grant falls inside the span, and the pool started full: at most
    # burst + rate * span calls (20 + 10 * ~10 s = ~120) reached the provider.
    bound = POOL.peak_capacity + POOL.rate_per_s * span_s
    assert calls <= bound, f"{calls} calls in {span_s:.2f}s, the pool allows {bound:.0f}"
    # ...and the load did press on the pool: it was the limit, not the replicas' speed.
    assert calls >= 0.75 * POOL.rate_per_s * LOAD_S, (calls, len(answers))
    # Each call is one served search; the searches the pool refused said so.
    status = [answer["providers"]["searxng"]["status"] for answer in answers]
    assert status.count("ok") == calls
    refused = [a for a in answers if any(d["kind"] == "quota_exhausted" for d in a["degradations"])]
    assert len(refused) == status.count("skipped") == len(answers) - calls > 0


async def test_a_breaker_opened_on_one_replica_is_open_on_the_others(
    tmp_path: Path, redis_url: str
) -> None:
    with FaultServer() as provider, Fleet(tmp_path) as fleet:
        config = write_config(tmp_path, redis_url, namespace(), provider.url)
        first, *others = fleet.serve(config, 3)
        clients = {p.base: httpx.AsyncClient(base_url=p.base, timeout=30) for p in fleet.procs}
        try:

            async def search(base: str, query: str) -> dict[str, Any]:
                answer = await clients[base].post("/v1/search", json={"query": query})
                assert answer.status_code == 200, answer.text
                body: dict[str, Any] = answer.json()
                return body

            # Closed everywhere: each replica calls the provider.
            for n, replica in enumerate(fleet.procs):
                healthy = await search(replica.base, f"breaker closed {n}")
                assert healthy["providers"]["searxng"]["status"] == "ok"
            assert len(provider.requests) == 3

            # The provider turns to a CAPTCHA page: four in a row on the first replica
            # open the breaker (the default rules: captcha is unexpected, open_breaker;
            # `breaker.unexpected_to_open`).
            provider.default_mode = "captcha"
            for n in range(4):
                tripped = await search(first.base, f"breaker trips here {n}")
                assert tripped["providers"]["searxng"]["status"] == "error"
            assert len(provider.requests) == 7

            # The others skip it on their next search once the closed record each read
            # before has aged out of its read cache (`breaker.read_cache_s`, the
            # documented bound): a stale record would send them to the provider.
            await asyncio.sleep(BreakerSettings().read_cache_s)
            for n, replica in enumerate(others):
                skipped = await search(replica.base, f"breaker open elsewhere {n}")
                assert skipped["providers"]["searxng"]["status"] == "skipped", skipped
                kinds = [d["kind"] for d in skipped["degradations"]]
                assert "breaker_open" in kinds, skipped["degradations"]
            assert len(provider.requests) == 7  # nobody called the provider again
        finally:
            for client in clients.values():
                await client.aclose()
