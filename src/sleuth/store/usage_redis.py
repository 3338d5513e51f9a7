"""`UsageStore` over the Redis store's client (`RedisStore` mixes it in).

Keys (one hash tag, `{usage}`, so a cluster keeps them on one slot and a search's
writes go in one pipelined round trip):

    ns:{usage}:tenants                    SET   tenants with rows
    ns:{usage}:rows:<tenant>              ZSET  UsageRow JSON by `at`   trimmed by prune
    ns:{usage}:audit                      ZSET  AuditEntry JSON by `at` trimmed by prune
    ns:{usage}:spent:<tenant>:<start>     HASH  currency -> micro-units spent since the
                                                UTC day or month that began at `start`
                                                (epoch seconds)      TTL 40 days

A member is 16 random hex digits and the JSON, so two equal rows both stay. Spending
is counted as it is written (HINCRBY, integers: exact), so a budget check is one read
however many calls the month holds. Nothing rewrites a member; only prune removes
those older than the retention.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from sleuth.store.usage_records import AuditEntry, UsageRow, period_starts

__all__ = ["RedisUsage"]

_SPENT_TTL_S = 40 * 86400
_TOKEN_CHARS = 16


def _member(text: str) -> str:
    return secrets.token_hex(_TOKEN_CHARS // 2) + text


def _text(member: str) -> str:
    return member[_TOKEN_CHARS:]


class RedisUsage:
    """`UsageStore` over `_pipeline` and `_redis`, which `RedisStore` supplies."""

    _redis: Redis | RedisCluster
    _ns: str

    async def _pipeline(self, calls: Sequence[tuple[Any, ...]]) -> list[Any]:
        raise NotImplementedError

    def _usage_key(self, *parts: str) -> str:
        return ":".join((self._ns, "{usage}", *parts))

    async def add_usage(self, rows: Sequence[UsageRow], audits: Sequence[AuditEntry] = ()) -> None:
        calls: list[tuple[Any, ...]] = []
        for row in rows:
            calls.append(("SADD", self._usage_key("tenants"), row.tenant))
            calls.append(
                ("ZADD", self._usage_key("rows", row.tenant), row.at, _member(row.to_json()))
            )
            if row.cost_micros and row.currency:
                # On the 1st the day and the month start together: count it once.
                for start in dict.fromkeys(period_starts(row.at)):
                    spent = self._usage_key("spent", row.tenant, str(int(start)))
                    calls.append(("HINCRBY", spent, row.currency, row.cost_micros))
                    calls.append(("EXPIRE", spent, _SPENT_TTL_S))
        calls.extend(
            ("ZADD", self._usage_key("audit"), audit.at, _member(audit.to_json()))
            for audit in audits
        )
        if calls:
            await self._pipeline(calls)

    async def _tenants(self, tenant: str | None) -> list[str]:
        if tenant is not None:
            return [tenant]
        found = await self._redis.execute_command("SMEMBERS", self._usage_key("tenants"))
        return sorted(found)

    async def usage_rows(
        self, since: float, until: float, tenant: str | None = None
    ) -> list[UsageRow]:
        tenants = await self._tenants(tenant)
        upper = f"({until}"  # `at < until`
        answers = await self._pipeline(
            [("ZRANGEBYSCORE", self._usage_key("rows", t), since, upper) for t in tenants]
        )
        rows = [UsageRow.from_json(_text(member)) for members in answers for member in members]
        return sorted(rows, key=lambda row: row.at)

    async def spent_micros(self, tenant: str, since: float, currency: str) -> int:
        spent = self._usage_key("spent", tenant, str(int(since)))
        found = await self._redis.execute_command("HGET", spent, currency)
        return int(found or 0)

    async def audit_entries(
        self, since: float, until: float, tenant: str | None = None, limit: int = 1000
    ) -> list[AuditEntry]:
        key = self._usage_key("audit")
        entries: list[AuditEntry] = []
        upper, offset, batch = f"({until}", 0, max(limit, 100)
        while len(entries) < limit:
            members = await self._redis.execute_command(
                "ZREVRANGEBYSCORE", key, upper, since, "LIMIT", offset, batch
            )
            if not members:
                break
            offset += len(members)
            found = (AuditEntry.from_json(_text(member)) for member in members)
            entries.extend(e for e in found if tenant is None or e.tenant == tenant)
        return entries[:limit]

    async def prune_usage(self, before: float) -> int:
        tenants = await self._tenants(None)
        upper = f"({before}"
        removed = await self._pipeline(
            [("ZREMRANGEBYSCORE", self._usage_key("rows", t), "-inf", upper) for t in tenants]
        )
        return sum(int(n) for n in removed)

    async def prune_audit(self, before: float) -> int:
        return int(
            await self._redis.execute_command(
                "ZREMRANGEBYSCORE", self._usage_key("audit"), "-inf", f"({before}"
            )
        )
