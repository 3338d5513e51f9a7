"""API keys as the service uses them: shown once, stored as a hash, limited per key."""

from __future__ import annotations

import pytest

from sleuth import keys
from sleuth.errors import InvalidRequest, Unauthorized
from sleuth.store import MemoryStore

T0 = 1_750_000_000.0


async def test_a_key_authenticates_as_its_tenant_and_only_its_hash_is_stored() -> None:
    store = MemoryStore()
    key, record = await keys.create_key(store, "acme", name="ci", now=T0)

    assert (await keys.authenticate(store, key)).tenant == "acme"
    assert record.key_hash == keys.key_hash(key) and key not in repr(record)
    for presented in (None, "", "sk_not-a-key"):
        with pytest.raises(Unauthorized):
            await keys.authenticate(store, presented)
    with pytest.raises(InvalidRequest) as bad:
        await keys.create_key(store, "no spaces please", now=T0)
    assert bad.value.field == "tenant"


def test_a_clock_behind_the_stored_time_never_refills_twice() -> None:
    bucket = keys.KeyBucket(per_minute=60, burst=1)  # one token a second
    state, first = bucket.apply(None, 1, now=10.0)
    # Another replica's clock, half a second behind, asks: nothing has refilled.
    state, behind = bucket.apply(state, 1, now=9.5)
    # Back on the first clock at 10.5: only half a second has passed since 10.0.
    _, early = bucket.apply(state, 1, now=10.5)

    assert first.granted and not behind.granted
    assert not early.granted and early.wait_s == pytest.approx(0.5)
