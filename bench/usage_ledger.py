"""What the usage ledger costs a search, and how fast its reports and budget checks are.

1. The replayed web search of the other benches (six back ends answering from
   `tests/data/web.jsonl`, recorded real responses), `no_cache`, on a SQLite store:
   the median and p95 of a whole search with the ledger on (rows, audit entry, a
   budget check) and off (`usage.enabled`, `audit.enabled` false), interleaved.
2. A month of rows (`--rows`, spread over 30 days and 50 tenants) in SQLite: the time
   to write them, one tenant's budget check (`spent_micros`), and a month's report
   per day for one tenant and for all.
3. The CPU a search's rows and audit entry cost the writer when written in group
   commits of 1, 2, 4, 16 and 64 searches (what `usage.ledger.GATHER_S` gathers).

    python bench/usage_ledger.py [--runs 200] [--rows 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path

from _common import CASSETTE, CHAIN, REQUEST, percentile
from sleuth.config import Settings
from sleuth.gateway import Sleuth
from sleuth.store import SqliteStore
from sleuth.store.usage_records import AuditEntry, UsageRow, period_starts
from sleuth.transport import ReplayTransport
from sleuth.usage import Ledger

PRICES = {name: {"per_1000": "5.00", "currency": "USD"} for name in CHAIN}


def settings(ledger_on: bool) -> Settings:
    return Settings(
        chain=CHAIN,
        providers={"google": {"options": {"cx": "replayed"}}},
        usage={"enabled": ledger_on, "prices": PRICES, "budgets": {"*": {"limit": "1000"}}},
        audit={"enabled": ledger_on},
    )


async def searches(runs: int, folder: Path) -> dict[bool, list[float]]:
    times: dict[bool, list[float]] = {True: [], False: []}
    for ledger_on in (True, False):  # warm both once
        store = SqliteStore(folder / f"warm-{ledger_on}.sqlite")
        async with Sleuth(settings(ledger_on), ReplayTransport.from_file(CASSETTE), store) as s:
            await s.search({**REQUEST, "no_cache": True})
        await store.aclose()
    stores = {on: SqliteStore(folder / f"state-{on}.sqlite") for on in (True, False)}
    cores = {
        on: Sleuth(settings(on), ReplayTransport.from_file(CASSETTE), stores[on])
        for on in (True, False)
    }
    for n in range(runs * 2):
        on = n % 2 == 0
        started = time.perf_counter()
        await cores[on].search({**REQUEST, "no_cache": True})
        times[on].append((time.perf_counter() - started) * 1000)
    for on in (True, False):
        await cores[on].aclose()
        await stores[on].aclose()
    return times


async def reports(count: int, folder: Path) -> None:
    store = SqliteStore(folder / "month.sqlite")
    rng = random.Random(19)
    now = time.time()
    month = period_starts(now)[1]
    span = 30 * 86400.0
    start = now - span
    rows = [
        UsageRow(
            at=start + rng.random() * span,
            tenant=f"tenant{rng.randrange(50)}",
            provider=rng.choice(CHAIN),
            outcome=rng.choice(["ok", "ok", "ok", "empty", "error", "cached"]),
            cost_micros=5000,
            currency="USD",
            tool=rng.choice([None, "internal_search", "company_intel_search"]),
        )
        for _ in range(count)
    ]
    started = time.perf_counter()
    for i in range(0, count, 1000):
        await store.add_usage(rows[i : i + 1000])
    write_s = time.perf_counter() - started
    ledger = Ledger(settings(True).usage, settings(True).audit)
    checks = []
    for _ in range(50):
        t = time.perf_counter()
        await store.spent_micros("tenant7", month, "USD")
        checks.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter()
    one = await ledger.report(store, since=start, until=now + 1, tenant="tenant7", by=["tool"])
    one_ms = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    every = await ledger.report(store, since=start, until=now + 1, by=["tenant"])
    all_ms = (time.perf_counter() - t) * 1000
    await store.aclose()
    if every["total"]["calls"] + every["total"]["cache_hits"] != count:
        raise SystemExit("the report does not hold every row written")
    print(f"{count} rows over {span / 86400:.1f} days, 50 tenants (SQLite):")
    print(f"  written in batches of 1000: {write_s:.2f} s ({count / write_s:,.0f} rows/s)")
    print(f"  budget check (one tenant's month): median {statistics.median(checks):.2f} ms")
    print(f"  report per day, one tenant ({one['total']['calls']} calls): {one_ms:.0f} ms")
    print(f"  report per day, every tenant ({every['total']['calls']} calls): {all_ms:.0f} ms")
    print(f"  total cost {every['total']['cost']['USD']} USD")


def cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)  # the store's worker threads too
    return used.ru_utime + used.ru_stime


async def commits(folder: Path, searches: int = 1280) -> None:
    print(f"writing {searches} searches' rows (3 providers) and audit entries (SQLite):")
    for batch in (1, 2, 4, 16, 64):
        store = SqliteStore(folder / f"commits-{batch}.sqlite")
        at = time.time()
        rows = [UsageRow(at, "default", name, "ok", 5000, currency="USD") for name in CHAIN[:3]]
        audit = AuditEntry(at, "default", "ok", "0f3a", tuple(CHAIN[:3]), adapter="http")
        await store.add_usage(rows, [audit])  # the schema and a pooled connection
        started = cpu_s()
        for _ in range(searches // batch):
            await store.add_usage(rows * batch, [audit] * batch)
        spent_us = (cpu_s() - started) / searches * 1e6
        await store.aclose()
        print(f"  {batch:2} searches a commit: {spent_us:6.1f} us of CPU a search")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        times = await searches(args.runs, folder)
        for on, label in ((False, "ledger off"), (True, "ledger on ")):
            values = times[on]
            print(
                f"replayed 6-provider search, {label}: median {statistics.median(values):.2f} ms,"
                f" p95 {percentile(values, 0.95):.2f} ms ({len(values)} runs)"
            )
        await reports(args.rows, folder)
        await commits(folder)


if __name__ == "__main__":
    asyncio.run(main())
