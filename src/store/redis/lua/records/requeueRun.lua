--[[
  requeueRun: a running run back to `queued`, its attempt given back when asked (a graceful stop).

  ARGV: prefix, run id, refund (0|1)
  Keys: r:<id>, runs:running, runs:queued
  Returns 1, or 0 when the run is not running.
]]
local P = ARGV[1]
--- @include "restatus"

local id, refund = ARGV[2], tonumber(ARGV[3])
local r = P..'r:'..id
if redis.call('HGET', r, 'status') ~= 'running' then return 0 end
restatus(id, r, 'running', 'queued')
local a = tonumber(redis.call('HGET', r, 'attempts') or '0') - refund
redis.call('HSET', r, 'attempts', a < 0 and 0 or a)
return 1
