--[[
  claimTasks: up to `limit` tasks of `kind` due now (or whose claim's lease ran out or whose instance is
  gone, counted as an attempt), each leased to `worker`.

  ARGV: prefix, kind, worker, instance, now, leaseMs, limit
  Keys: tq:<kind>, t:<kind>:<key>, alive:<instance>
  Returns five fields per claim: id, key, attempts, last error, lease end.
]]
local P = ARGV[1]
--- @include "gone"

local kind, w, me, now, lease, limit = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local tq = P..'tq:'..kind
local out = {}
local entries = redis.call('ZRANGE', tq, 0, -1, 'WITHSCORES')
for j = 1, #entries, 2 do
  if #out >= limit * 5 then break end
  local key = entries[j]
  local t = P..'t:'..kind..':'..key
  local inst = redis.call('HGET', t, 'i')
  if tonumber(entries[j + 1]) <= now or (inst and gone(inst, me)) then
    -- a lease that ran out counts as an attempt
    if inst then redis.call('HINCRBY', t, 'att', 1) end
    local untilT = string.format('%.0f', now + lease)
    redis.call('HSET', t, 'w', w, 'i', me, 'until', untilT)
    redis.call('ZADD', tq, untilT, key)
    local f = redis.call('HMGET', t, 'id', 'att', 'err')
    out[#out + 1] = f[1]
    out[#out + 1] = key
    out[#out + 1] = f[2]
    out[#out + 1] = f[3]
    out[#out + 1] = untilT
  end
end
return out
