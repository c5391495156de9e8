--[[
  redeliver: a finished run's reply sent again: a new pending entry, owned by this instance, that
  becomes the run's delivery.

  ARGV: prefix, delivery id, run id, entry json, createdAt, channel JSON ({channel, to}), instance
  Keys: d:<id>, outbox, r:<run id>, runs:done
]]
local P = ARGV[1]
--- @include "put"

local id, runId, at = ARGV[2], ARGV[3], ARGV[5]
local c = cjson.decode(ARGV[6])
redis.call('HSET', P..'d:'..id, 'j', ARGV[4], 'status', 'pending', 'attempts', 0, 'next', at, 'upd', at, 'sent', 0, 'owner', ARGV[7])
redis.call('ZADD', P..'outbox', at, id)
local r = P..'r:'..runId
if redis.call('EXISTS', r) == 1 then
  redis.call('HSET', r, 'dlv', id, 'dStatus', 'pending', 'dAttempts', 0)
  redis.call('HDEL', r, 'dReason')
  put(r, 'dChannel', c.channel)
  put(r, 'dTo', c.to)
  redis.call('ZREM', P..'runs:done', runId)
end
return 1
