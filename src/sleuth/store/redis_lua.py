"""The Lua scripts of the Redis store: every change that must check and write several
fields or keys at once, run atomically by Redis (see `redis.py` and `redis_tasks.py`
for the keys they touch and why each exists).

Each script touches the keys of one hash tag only, so it runs on one slot of a Redis
Cluster. Keys a script derives from an id (a task's hash from the queue's entry) are
built inside it from the shard's prefix and share the declared keys' tag.

Scripts cannot call each other, so the one that appends events (`_APPEND_EVENTS`) is
a Lua function put in front of each script that appends: APPEND, FINISH and CANCEL
number a task's events the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "APPEND",
    "CACHE_GET",
    "CACHE_PRUNE_ONE",
    "CACHE_PUT",
    "CANCEL",
    "CLAIM",
    "CREATE",
    "EXPIRE",
    "FINISH",
    "IDEM_CLAIM",
    "IDEM_END",
    "KEY_LIST",
    "KEY_PUT",
    "KEY_REVOKE",
    "RELEASE",
    "RENEW",
    "SWAP",
    "Script",
    "pairs",
]


@dataclass(frozen=True)
class Script:
    """A Lua script, run by its SHA1 (EVALSHA), loaded on first use.

    The `#!lua` line (Redis 7, Valkey) makes a cluster node refuse a script that
    touches keys of two slots, instead of running it when it happens to own both.
    """

    text: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        if not self.text.startswith("#!"):
            object.__setattr__(self, "text", "#!lua\n" + self.text.lstrip("\n"))
        sha = hashlib.sha1(self.text.encode(), usedforsecurity=False).hexdigest()
        object.__setattr__(self, "sha", sha)


def pairs(flat: Sequence[Any]) -> dict[str, str]:
    """A flat HGETALL reply from a script, as a dict."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


# --- breakers and buckets, cache, API keys (redis.py) ---------------------------------

SWAP = Script("""
local cur = redis.call('HGET', KEYS[1], 't') or ''
if cur ~= ARGV[1] then
  return {0, cur, redis.call('HGET', KEYS[1], 's') or ''}
end
redis.call('HSET', KEYS[1], 't', ARGV[2], 's', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1}
""")

CACHE_GET = Script("""
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HINCRBY', KEYS[1], 'hits', 1)
return redis.call('HGETALL', KEYS[1])
""")

# ARGV: complete (0/1), ttl ms, created, then the field/value pairs to write.
CACHE_PUT = Script("""
local old = redis.call('HGET', KEYS[1], 'complete')
if old == '1' and ARGV[1] == '0' then return 0 end
redis.call('HSET', KEYS[1], 'complete', ARGV[1], unpack(ARGV, 4))
if not old then redis.call('HSET', KEYS[1], 'created', ARGV[3], 'hits', 0) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
""")

# 'gone' (no entry), 'deleted', or the entry's created_at (kept).
CACHE_PRUNE_ONE = Script("""
local e = redis.call('HMGET', KEYS[1], 'created', 'hits')
if not e[1] then return 'gone' end
if tonumber(e[1]) < tonumber(ARGV[1]) and tonumber(e[2]) < tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  return 'deleted'
end
return e[1]
""")

# KEYS: the key's hash, the set of all keys; ARGV: base, key_hash, then fields.
KEY_PUT = Script("""
local base, h = ARGV[1], ARGV[2]
local old = redis.call('HMGET', KEYS[1], 'tenant', 'prefix')
if old[1] then
  redis.call('SREM', base .. 'tenant:' .. old[1], h)
  redis.call('SREM', base .. 'prefix:' .. old[2], h)
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
local new = redis.call('HMGET', KEYS[1], 'tenant', 'prefix')
redis.call('SADD', KEYS[2], h)
redis.call('SADD', base .. 'tenant:' .. new[1], h)
redis.call('SADD', base .. 'prefix:' .. new[2], h)
return 1
""")

KEY_LIST = Script("""
local out = {}
for _, h in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local record = redis.call('HGETALL', ARGV[1] .. 'key:' .. h)
  if #record > 0 then
    table.insert(record, 'key_hash')
    table.insert(record, h)
    table.insert(out, record)
  end
end
return out
""")

KEY_REVOKE = Script("""
local n = 0
for _, h in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local k = ARGV[1] .. 'key:' .. h
  local e = redis.call('HMGET', k, 'prefix', 'revoked')
  if e[1] == ARGV[2] and e[2] == '0' then
    redis.call('HSET', k, 'revoked', '1')
    n = n + 1
  end
end
return n
""")


# --- tasks (redis_tasks.py) ------------------------------------------------------------

# Appends the events ARGV[first], ARGV[first + 1], ... (at, kind, detail JSON each) to
# the stream `key`, entry ids <seq>-0 after the last one; returns their seqs. The stream
# is never trimmed, so its length is the last seq.
_APPEND_EVENTS = """
local function append_events(key, first)
  local seq, seqs = redis.call('XLEN', key), {}
  for i = first, #ARGV, 3 do
    seq = seq + 1
    redis.call('XADD', key, seq .. '-0', 'at', ARGV[i], 'kind', ARGV[i + 1],
      'detail', ARGV[i + 2])
    seqs[#seqs + 1] = seq
  end
  return seqs
end
"""

# KEYS: task, pending, running, done:success, done:failed, events
# ARGV: id, status, queue member, lease_until, finished_at, ttl ms, n, n field/value
# arguments, then the task's first events (at, kind, detail each), appended with it
CREATE = Script(
    _APPEND_EVENTS
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local fields = tonumber(ARGV[7])
redis.call('HSET', KEYS[1], unpack(ARGV, 8, 7 + fields))
append_events(KEYS[6], 8 + fields)
local status = ARGV[2]
if status == 'pending' then redis.call('ZADD', KEYS[2], 0, ARGV[3])
elseif status == 'running' then redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
else
  redis.call('ZADD', status == 'success' and KEYS[4] or KEYS[5], ARGV[5], ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  if redis.call('EXISTS', KEYS[6]) == 1 then redis.call('PEXPIRE', KEYS[6], ARGV[6]) end
end
return 1
"""
)

# KEYS: pending, running; ARGV: shard base, now, lease_until, worker
CLAIM = Script("""
local base, now, lease, worker = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
while true do
  local id
  local head = redis.call('ZRANGE', KEYS[1], '-', '+', 'BYLEX', 'LIMIT', 0, 1)[1]
  if head then
    redis.call('ZREM', KEYS[1], head)
    id = string.match(head, '^[^|]*|[^|]*|(.*)$')
  else
    id = redis.call('ZRANGE', KEYS[2], '-inf', '(' .. now, 'BYSCORE', 'LIMIT', 0, 1)[1]
    if not id then return false end
  end
  local task = base .. 'task:' .. id
  local status = redis.call('HGET', task, 'status')
  if status == 'pending' or status == 'running' then
    redis.call('ZADD', KEYS[2], lease, id)
    if not redis.call('HGET', task, 'started') then redis.call('HSET', task, 'started', now) end
    redis.call('HSET', task, 'status', 'running', 'worker', worker, 'lease', lease, 'updated', now)
    redis.call('HINCRBY', task, 'attempts', 1)
    return redis.call('HGETALL', task)
  end
  redis.call('ZREM', KEYS[2], id)  -- an entry whose task is gone: drop it, look again
end
""")

# KEYS: task, running; ARGV: id, worker, now, lease_until
RENEW = Script("""
if redis.call('HGET', KEYS[1], 'status') ~= 'running'
  or redis.call('HGET', KEYS[1], 'worker') ~= ARGV[2] then return false end
redis.call('HSET', KEYS[1], 'lease', ARGV[4], 'updated', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
return redis.call('HGETALL', KEYS[1])
""")

# KEYS: task, running, done:<status>, events
# ARGV: id, worker, now, status, ttl ms, trim before, n, n field/value arguments (result
# or error), then the events to append (at, kind, detail each: the "done" event)
FINISH = Script(
    _APPEND_EVENTS
    + """
if redis.call('HGET', KEYS[1], 'status') ~= 'running'
  or redis.call('HGET', KEYS[1], 'worker') ~= ARGV[2] then return false end
local n = tonumber(ARGV[7])
redis.call('HDEL', KEYS[1], 'lease', 'result', 'error')
redis.call('HSET', KEYS[1], 'status', ARGV[4], 'finished', ARGV[3], 'updated', ARGV[3],
  unpack(ARGV, 8, 7 + n))
append_events(KEYS[4], 8 + n)
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[4], ARGV[5])
return redis.call('HMGET', KEYS[1], 'tenant', 'idem')
"""
)

# KEYS: task, running, pending; ARGV: id, worker, now
RELEASE = Script("""
if redis.call('HGET', KEYS[1], 'status') ~= 'running'
  or redis.call('HGET', KEYS[1], 'worker') ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], 'worker', 'lease')
redis.call('HSET', KEYS[1], 'status', 'pending', 'updated', ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], 0, redis.call('HGET', KEYS[1], 'qm'))
return 1
""")

# KEYS: task, pending, done:failed, events
# ARGV: id, now, error JSON, ttl ms, then the events to append when a pending task fails
# (at, kind, detail each: the "done" event)
CANCEL = Script(
    _APPEND_EVENTS
    + """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return false end
if status == 'pending' then
  redis.call('ZREM', KEYS[2], redis.call('HGET', KEYS[1], 'qm'))
  redis.call('HDEL', KEYS[1], 'result')
  redis.call('HSET', KEYS[1], 'status', 'failed', 'error', ARGV[3], 'finished', ARGV[2],
    'updated', ARGV[2], 'cancel', '1')
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
  append_events(KEYS[4], 5)
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
elseif status == 'running' then
  redis.call('HSET', KEYS[1], 'cancel', '1', 'updated', ARGV[2])
end
return redis.call('HGETALL', KEYS[1])
"""
)

# KEYS: events, task; ARGV: ttl ms (for events of no task), then the events (at, kind,
# detail each). Returns their seqs.
APPEND = Script(
    _APPEND_EVENTS
    + """
local seqs = append_events(KEYS[1], 2)
local ttl = redis.call('PTTL', KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl)
elseif ttl == -2 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return seqs
"""
)

# KEYS: done:success, done:failed; ARGV: shard base, finished before, batch
# Returns {removed, looked at, then id, tenant, idempotency key per keyed task}.
EXPIRE = Script("""
local base, limit = ARGV[1], tonumber(ARGV[3])
local removed, seen, keyed = 0, 0, {}
for _, done in ipairs(KEYS) do
  local ids = redis.call('ZRANGE', done, '-inf', '(' .. ARGV[2], 'BYSCORE', 'LIMIT', 0, limit)
  for _, id in ipairs(ids) do
    local task = base .. 'task:' .. id
    local t = redis.call('HMGET', task, 'tenant', 'idem')
    if redis.call('DEL', task) == 1 then
      removed = removed + 1
      if t[2] then
        table.insert(keyed, id)
        table.insert(keyed, t[1])
        table.insert(keyed, t[2])
      end
    end
    redis.call('DEL', base .. 'events:' .. id)
    redis.call('ZREM', done, id)
  end
  seen = seen + #ids
end
return {removed, seen, unpack(keyed)}
""")

# KEYS: idempotency key; ARGV: task id, the holder to take over ('' for none)
IDEM_CLAIM = Script("""
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[2] then return cur end
redis.call('SET', KEYS[1], ARGV[1])
return false
""")

# KEYS: idempotency key; ARGV: task id, ttl ms (0: delete). Only while it names the task.
IDEM_END = Script("""
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then return redis.call('DEL', KEYS[1]) end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
""")
