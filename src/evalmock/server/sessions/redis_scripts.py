"""The Redis session store's keys and the Lua scripts that write them, each one atomic in Redis.

The keys, for session S whose token has digest D (all under `evalmock:`):

| key | type | holds |
|---|---|---|
| `session:S` | hash | `record` (its JSON), `digest`, `lastUsedAt`, `requests`, `dropped` |
| `token:D` | string | S |
| `fault-order:S` | list | the queued faults' ids, in order |
| `fault:S` | hash | each fault's JSON by id (as queued) |
| `fault-left:S` | hash | each fault's remaining uses by id |
| `journal:S` | list | the entries' JSON, oldest first, at most `max_journal` (RPUSH, LTRIM) |
| `pages:S`, `page-order:S` | hash, list | the page each cursor leads to; the oldest go first |
| `sessions:live` | sorted set | every session's id, scored by its last use (the count, its bound) |

Each script's KEYS and ARGV are said above it; a script that finds no live session answers -1.
"""

from __future__ import annotations

PREFIX = "evalmock:"

# Every script that reads a session first asks whether it is live by the store's clock.
LIVE_CHECK = """
local last = redis.call('HGET', KEYS[1], 'lastUsedAt')
if not last or tonumber(ARGV[1]) - tonumber(last) >= tonumber(ARGV[2]) then return -1 end
"""

# KEYS: session, token, index; ARGV: now, idle, id, record, digest, cutoff, max_sessions, ttl_ms
_CREATE = """
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[6])
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[7]) then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'record', ARGV[4], 'digest', ARGV[5], 'lastUsedAt', ARGV[1],
    'requests', 0, 'dropped', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[8])
redis.call('ZADD', KEYS[3], ARGV[1], ARGV[3])
return 1
"""

# KEYS: the session's 8 keys (session first, token second), index; ARGV: now, idle, id, ttl_ms,
# whether to answer the record. Answers the record (or nil) and the fault queue as it is now: its
# ids in order, then the fault hash's and the fault-left hash's fields and values.
_USE = (
    LIVE_CHECK
    + """
redis.call('HSET', KEYS[1], 'lastUsedAt', ARGV[1])
for i = 1, 8 do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
redis.call('ZADD', KEYS[9], ARGV[1], ARGV[3])
local record = false
if ARGV[5] == '1' then record = redis.call('HGET', KEYS[1], 'record') end
return {record, redis.call('LRANGE', KEYS[3], 0, -1), redis.call('HGETALL', KEYS[4]),
    redis.call('HGETALL', KEYS[5])}
"""
)

# KEYS: the session's 8 keys, index; ARGV: now, idle, id
_DELETE = """
local last = redis.call('HGET', KEYS[1], 'lastUsedAt')
local live = last and tonumber(ARGV[1]) - tonumber(last) < tonumber(ARGV[2])
redis.call('DEL', unpack(KEYS, 1, 8))
redis.call('ZREM', KEYS[9], ARGV[3])
if live then return 1 end
return 0
"""

# KEYS: session, fault-order, fault, fault-left; ARGV: now, idle, fault id, JSON, remaining, max
_PUSH_FAULT = (
    LIVE_CHECK
    + """
if redis.call('LLEN', KEYS[2]) >= tonumber(ARGV[6]) then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('HSET', KEYS[4], ARGV[3], ARGV[5])
if ttl > 0 then for i = 2, 4 do redis.call('PEXPIRE', KEYS[i], ttl) end end
return 1
"""
)

# KEYS: fault-order, fault, fault-left; ARGV: fault id. One use of the fault if it has one left
# (its remaining uses before this one), else 0: another replica took the last.
_CLAIM = """
local left = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
if left <= 0 then return 0 end
left = redis.call('HINCRBY', KEYS[3], ARGV[1], -1)
if left <= 0 then
    redis.call('LREM', KEYS[1], 1, ARGV[1])
    redis.call('HDEL', KEYS[2], ARGV[1])
    redis.call('HDEL', KEYS[3], ARGV[1])
end
return left + 1
"""

# KEYS: session, then the keys to delete; ARGV: now, idle, then the session field to zero (or '')
_CLEAR = (
    LIVE_CHECK
    + """
redis.call('DEL', unpack(KEYS, 2))
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], ARGV[3], 0) end
return 1
"""
)

# KEYS: session, journal, pages, page-order; ARGV: now, idle, entry, max_journal, cursor (or ''),
# its page, max_cursor_pages
_APPEND = (
    LIVE_CHECK
    + """
local ttl = redis.call('PTTL', KEYS[1])
local length = redis.call('RPUSH', KEYS[2], ARGV[3])
local bound = tonumber(ARGV[4])
if length > bound then
    redis.call('LTRIM', KEYS[2], length - bound, -1)
    redis.call('HINCRBY', KEYS[1], 'dropped', length - bound)
end
redis.call('HINCRBY', KEYS[1], 'requests', 1)
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
if ARGV[5] ~= '' then
    if redis.call('HSET', KEYS[3], ARGV[5], ARGV[6]) == 1 then
        if redis.call('RPUSH', KEYS[4], ARGV[5]) > tonumber(ARGV[7]) then
            redis.call('HDEL', KEYS[3], redis.call('LPOP', KEYS[4]))
        end
    end
    if ttl > 0 then
        redis.call('PEXPIRE', KEYS[3], ttl)
        redis.call('PEXPIRE', KEYS[4], ttl)
    end
end
return 1
"""
)

SCRIPTS = {
    "create": _CREATE,
    "use": _USE,
    "delete": _DELETE,
    "push_fault": _PUSH_FAULT,
    "claim": _CLAIM,
    "clear": _CLEAR,
    "append": _APPEND,
}


def key(kind: str, name: str) -> str:
    return f"{PREFIX}{kind}:{name}"


def session_keys(session_id: str, digest: str) -> list[str]:
    """Every key of a session, the session's hash first and its token second."""
    return [
        key("session", session_id),
        key("token", digest),
        *(
            key(kind, session_id)
            for kind in ("fault-order", "fault", "fault-left", "journal", "pages", "page-order")
        ),
    ]


INDEX = key("sessions", "live")
