--[[
  claimRuns: up to `limit` runs due now, each the head of its session, leased to `worker`. Claims whose
  lease ran out, or whose instance is gone, are taken back first and counted as an attempt; sessions
  waiting for a retry whose time has come are due again.

  ARGV: prefix, now, leaseMs, limit, worker, instance
  Keys: q:claimed, q:wait, q:ready, q:n, qk:<session key>, r:<id>, alive:<instance>
  Returns the queue's counts, then six fields per claim: id, session key, attempts, last error,
  lease end, the run as accepted (JSON).
]]
local P = ARGV[1]
--- @include "gone"
--- @include "ready"
--- @include "queueCounts"

local now, lease, limit, w, me = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], ARGV[6]
local held = redis.call('ZRANGE', P..'q:claimed', 0, -1, 'WITHSCORES')
for j = 1, #held, 2 do
  local id = held[j]
  local r = P..'r:'..id
  local inst = redis.call('HGET', r, 'qi')
  if tonumber(held[j + 1]) <= now or not inst or gone(inst, me) then
    redis.call('ZREM', P..'q:claimed', id)
    redis.call('HINCRBY', r, 'qa', 1)
    redis.call('HDEL', r, 'qw', 'qi')
    ready(redis.call('HGET', r, 'qk'))
  end
end
local due = redis.call('ZRANGEBYSCORE', P..'q:wait', '-inf', now)
for _, key in ipairs(due) do
  redis.call('ZREM', P..'q:wait', key)
  ready(key)
end
local out = {0, 0}
local untilT = string.format('%.0f', now + lease)
while #out < 2 + limit * 6 do
  local top = redis.call('ZPOPMIN', P..'q:ready')
  if #top == 0 then break end
  local key = top[1]
  local list = P..'qk:'..key
  local id = redis.call('LINDEX', list, 0)
  -- a run that ended without its claim ending (a crash between the two) gives way to the next of its key
  while id do
    local st = redis.call('HGET', P..'r:'..id, 'status')
    if st == 'queued' or st == 'running' then break end
    redis.call('LPOP', list)
    redis.call('DECR', P..'q:n')
    id = redis.call('LINDEX', list, 0)
  end
  if id then
    local r = P..'r:'..id
    redis.call('HSET', r, 'qw', w, 'qi', me)
    redis.call('ZADD', P..'q:claimed', untilT, id)
    local f = redis.call('HMGET', r, 'qa', 'qe', 'n')
    out[#out + 1] = id
    out[#out + 1] = key
    out[#out + 1] = f[1] or '0'
    out[#out + 1] = f[2]
    out[#out + 1] = untilT
    out[#out + 1] = f[3]
  end
end
local c = counts()
out[1], out[2] = c[1], c[2]
return out
