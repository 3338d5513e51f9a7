"""The ledger's writer: every recorded search reaches the store, those recorded within
`GATHER_S` of each other (or while a write is out) in one write, a flush without
waiting for the gathering, and a failed write loses only its own."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import pytest

from sleuth.store.memory import MemoryStore
from sleuth.store.usage_records import AuditEntry, UsageRow
from sleuth.usage import ledger as ledger_module
from sleuth.usage.accounting import Finished
from sleuth.usage.ledger import Ledger
from sleuth.usage.settings import AuditSettings, UsageSettings

T0 = 1_790_000_000.0


class CountingStore(MemoryStore):
    """A memory store that counts its writes and can hold one until told."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[int] = []
        self.hold: asyncio.Event | None = None
        self.fail_next = False

    async def add_usage(self, rows: Sequence[UsageRow], audits: Sequence[AuditEntry] = ()) -> None:
        self.writes.append(len(audits))
        if self.hold is not None:
            await self.hold.wait()
        if self.fail_next:
            self.fail_next = False
            raise OSError("disk full")
        await super().add_usage(rows, audits)


def finished(n: int) -> Finished:
    return Finished(at=T0 + n, tenant="acme", error_code="no_results", task_id=f"srch_{n}")


async def tenants_audit(store: CountingStore) -> list[str | None]:
    entries = await store.audit_entries(T0 - 1, T0 + 10_000, "acme", limit=1000)
    return sorted(entry.task_id or "" for entry in entries)


async def test_searches_recorded_together_are_written_in_one_go() -> None:
    store, ledger = CountingStore(), Ledger(UsageSettings(), AuditSettings())
    for n in range(50):
        ledger.record(store, finished(n))
    await ledger.flush()
    assert store.writes == [50]
    assert await tenants_audit(store) == sorted(f"srch_{n}" for n in range(50))


async def test_searches_recorded_within_the_gathering_are_written_together_unflushed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ledger_module, "GATHER_S", 0.05)
    store, ledger = CountingStore(), Ledger(UsageSettings(), AuditSettings())
    ledger.record(store, finished(0))
    await asyncio.sleep(0)  # the writer starts gathering
    for n in range(1, 5):
        ledger.record(store, finished(n))
    for _ in range(500):  # no flush: the gathering ends by itself
        if store.writes:
            break
        await asyncio.sleep(0.01)
    assert store.writes == [5]


async def test_a_flush_writes_what_waits_without_waiting_for_the_gathering(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ledger_module, "GATHER_S", 600.0)
    store, ledger = CountingStore(), Ledger(UsageSettings(), AuditSettings())
    ledger.record(store, finished(0))
    await asyncio.sleep(0)  # the writer is gathering, for ten minutes
    await asyncio.wait_for(ledger.flush(), timeout=10)
    assert await tenants_audit(store) == ["srch_0"]


async def test_searches_recorded_while_a_write_is_out_go_in_the_next_one() -> None:
    store, ledger = CountingStore(), Ledger(UsageSettings(), AuditSettings())
    store.hold = asyncio.Event()
    ledger.record(store, finished(0))
    flushing = asyncio.create_task(ledger.flush())
    await asyncio.sleep(0.01)  # the writer takes the first search and waits on the store
    for n in range(1, 6):
        ledger.record(store, finished(n))
    store.hold.set()
    await flushing
    assert store.writes == [1, 5]
    assert len(await tenants_audit(store)) == 6


async def test_a_failed_write_is_logged_and_later_searches_are_still_written(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store, ledger = CountingStore(), Ledger(UsageSettings(), AuditSettings())
    store.fail_next = True
    ledger.record(store, finished(0))
    with caplog.at_level(logging.ERROR):
        await ledger.flush()
    assert "the usage of 1 search(es) could not be recorded" in caplog.text
    ledger.record(store, finished(1))
    await ledger.flush()
    assert await tenants_audit(store) == ["srch_1"]


def test_what_waited_behind_a_write_cut_by_the_loops_end_is_written_by_the_next_flush() -> None:
    store, ledger = CountingStore(), Ledger(UsageSettings(), AuditSettings())

    async def end_during_a_write() -> None:
        store.hold = asyncio.Event()
        ledger.record(store, finished(0))
        flushing = asyncio.create_task(ledger.flush())
        await asyncio.sleep(0.01)  # the writer takes search 0 and waits on the store
        ledger.record(store, finished(1))  # waits behind it; then the loop ends
        flushing.cancel()

    asyncio.run(end_during_a_write())  # cancels the writer mid-write: search 0 is lost
    store.hold = None
    asyncio.run(ledger.flush())
    assert store.writes == [1, 1]

    async def audit() -> list[str | None]:
        return await tenants_audit(store)

    assert asyncio.run(audit()) == ["srch_1"]
