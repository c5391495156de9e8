--[[
  startRun: a run under way: `running`, one more attempt.

  ARGV: prefix, run id, startedAt
  Keys: r:<id>, runs:<status>
  Returns 1, or 0 for an unknown run.
]]
local P = ARGV[1]
--- @include "restatus"

local id, at = ARGV[2], ARGV[3]
local r = P..'r:'..id
local st = redis.call('HGET', r, 'status')
if not st then return 0 end
restatus(id, r, st, 'running')
redis.call('HSET', r, 'startedAt', at)
redis.call('HINCRBY', r, 'attempts', 1)
return 1
