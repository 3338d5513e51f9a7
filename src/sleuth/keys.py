"""API keys and per-key request limits.

A key is shown once, when it is made (`sleuth keys create --tenant T`), and only its
SHA-256 is stored: a leaked store leaks no key. A request presents the key as
`Authorization: Bearer sk_...` or `X-API-Key: sk_...`; the key's tenant decides which
tasks the request may see. Each key draws from its own token bucket in the store, so
every replica sharing the store enforces one limit per key.

>>> key = new_key()
>>> key.startswith("sk_"), len(key_hash(key)), key_prefix(key) == key[:11]
(True, 64, True)
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sleuth.errors import InvalidRequest, TooManyRequests, Unauthorized
from sleuth.service_settings import KeyLimit
from sleuth.store import CounterStore, KeyRecord, KeyStore, Take
from sleuth.store.base import KeyRole

__all__ = [
    "KeyBucket",
    "admit",
    "authenticate",
    "create_key",
    "key_hash",
    "key_prefix",
    "new_key",
]

_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
#: "sk_" and the first 8 characters: enough to tell keys apart, far too few to guess one.
_PREFIX_CHARS = 11


def new_key() -> str:
    return "sk_" + secrets.token_urlsafe(32)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_prefix(key: str) -> str:
    return key[:_PREFIX_CHARS]


async def create_key(
    store: KeyStore, tenant: str, *, name: str = "", now: float, role: KeyRole = "tenant"
) -> tuple[str, KeyRecord]:
    """Make a key for `tenant`: (the key, to show once; its stored record). An `admin`
    key is an operator's: it also sees every tenant's figures (dashboard, /metrics)."""
    if not _TENANT.fullmatch(tenant):
        raise InvalidRequest(
            f"tenant: {tenant!r} is not a tenant name; allowed: 1-64 letters, digits, "
            "'_', '.' or '-', starting with a letter or digit",
            field="tenant",
        )
    key = new_key()
    record = KeyRecord(
        key_hash=key_hash(key),
        tenant=tenant,
        prefix=key_prefix(key),
        created_at=now,
        name=name,
        role=role,
    )
    await store.put_key(record)
    return key, record


async def authenticate(store: KeyStore, presented: str | None) -> KeyRecord:
    """The record of a valid, unrevoked key; `Unauthorized` otherwise (the message never
    says whether the key exists)."""
    if not presented:
        raise Unauthorized(
            "an API key is required: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'"
        )
    record = await store.get_key(key_hash(presented.strip()))
    if record is None or record.revoked:
        raise Unauthorized("the API key is not valid")
    return record


@dataclass(frozen=True)
class KeyBucket:
    """A token bucket (a `BucketRule`): `burst` requests at once, refilled at
    `per_minute` / 60 per second.

    >>> bucket = KeyBucket(per_minute=60, burst=1)
    >>> state, first = bucket.apply(None, 1, now=0.0)
    >>> _, second = bucket.apply(state, 1, now=0.5)
    >>> first.granted, second.granted, second.wait_s
    (True, False, 0.5)
    """

    per_minute: float
    burst: int

    def apply(
        self, state: Mapping[str, Any] | None, tokens: float, now: float
    ) -> tuple[dict[str, Any], Take]:
        rate = self.per_minute / 60.0
        level, at = float(self.burst), now
        if state is not None:
            # Replicas' clocks differ a little: a `now` behind the stored time refills
            # nothing, and the stored time never moves back (or that time refills twice).
            at = max(now, float(state["at"]))
            level = min(float(self.burst), float(state["level"]) + (at - float(state["at"])) * rate)
        if level >= tokens:
            return {"level": level - tokens, "at": at}, Take(True)
        wait = (tokens - level) / rate if rate > 0 else math.inf
        return {"level": level, "at": at}, Take(False, wait, "per-key rate limit")


async def admit(store: CounterStore, record: KeyRecord, limit: KeyLimit, now: float) -> None:
    """Spend one request of the key's limit, or raise `TooManyRequests` with when to retry."""
    take = await store.take(
        f"key:{record.key_hash[:16]}", 1, now, KeyBucket(limit.per_minute, limit.burst)
    )
    if not take.granted:
        retry_after = max(1, math.ceil(take.wait_s))
        raise TooManyRequests(
            f"rate limit of key {record.prefix}... reached ({limit.per_minute:g}/min, burst "
            f"{limit.burst}); retry after {retry_after}s",
            retry_after_s=float(retry_after),
        )
