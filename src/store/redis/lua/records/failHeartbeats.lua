--[[
  failHeartbeats: heartbeat runs left running by this instance or by one that is gone, ended as
  `error` with `reason`; with only-gone, those of an instance that is gone.

  ARGV: prefix, at, reason, instance, only-gone (0|1)
  Keys: runs:running, r:<id>, alive:<instance>, runs:error, runs:done
  Returns how many.
]]
local P = ARGV[1]
--- @include "restatus"

local at, reason, me, onlyGone = ARGV[2], ARGV[3], ARGV[4], ARGV[5] == '1'
local n = 0
for _, id in ipairs(redis.call('ZRANGE', P..'runs:running', 0, -1)) do
  local r = P..'r:'..id
  if redis.call('HGET', r, 'kind') == 'heartbeat' then
    local owner = redis.call('HGET', r, 'owner')
    local gone = not owner or redis.call('EXISTS', P..'alive:'..owner) == 0
    if gone or (owner == me and not onlyGone) then
      restatus(id, r, 'running', 'error')
      redis.call('HSET', r, 'finishedAt', at, 'error', reason, 'dStatus', 'skipped', 'dReason', 'heartbeat did not succeed')
      redis.call('ZADD', P..'runs:done', at, id)
      n = n + 1
    end
  end
end
return n
