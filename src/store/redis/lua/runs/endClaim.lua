--[[
  endClaim: ends the claim of a run: complete (the next run of its session becomes due), fail (the
  session waits for the retry time; counted as an attempt), release (due at once, not counted; a run
  given back while `running` is `queued` again, its attempt given back) or extend (the lease runs
  `leaseMs` from now).

  ARGV: prefix, op (complete|fail|release|extend), run id, worker, now, and for fail the retry time and
    the error, for extend the lease
  Keys: r:<id>, q:claimed, q:wait, q:ready, q:n, qk:<session key>, runs:running, runs:queued
  Returns 0 when `worker` does not hold the run's claim, else 1; then the queue's counts.
]]
local P = ARGV[1]
--- @include "restatus"
--- @include "ready"
--- @include "queueCounts"

local op, id, w, now = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local r = P..'r:'..id
local c
if redis.call('HGET', r, 'qw') ~= w or redis.call('ZSCORE', P..'q:claimed', id) == false then
  c = counts()
  return {0, c[1], c[2]}
end
local key = redis.call('HGET', r, 'qk')
if op == 'extend' then
  redis.call('ZADD', P..'q:claimed', string.format('%.0f', now + tonumber(ARGV[6])), id)
else
  redis.call('ZREM', P..'q:claimed', id)
  redis.call('HDEL', r, 'qw', 'qi')
  if op == 'complete' then
    redis.call('HDEL', r, 'qa', 'qe')
    redis.call('LPOP', P..'qk:'..key)
    redis.call('DECR', P..'q:n')
    ready(key)
  elseif op == 'fail' then
    redis.call('HINCRBY', r, 'qa', 1)
    redis.call('HSET', r, 'qe', ARGV[7])
    redis.call('ZADD', P..'q:wait', ARGV[6], key)
  else
    ready(key)
    if redis.call('HGET', r, 'status') == 'running' then
      restatus(id, r, 'running', 'queued')
      local a = tonumber(redis.call('HGET', r, 'attempts') or '0') - 1
      redis.call('HSET', r, 'attempts', a < 0 and 0 or a)
    end
  end
end
c = counts()
return {1, c[1], c[2]}
