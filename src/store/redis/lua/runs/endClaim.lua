--[[
  endClaim: ends a claim of a run or of a task: complete (the next of its key becomes due), fail (due
  again at the retry time, counted as an attempt), release (due at once, not counted) or extend (the
  lease runs `leaseMs` from now). A run given back while `running` is `queued` again, its attempt given
  back.

  ARGV: prefix, op (complete|fail|release|extend), id, worker, now, and for fail the retry time and the
    error, for extend the lease
  Keys: tid:<id>, t:<kind>:<key>, tq:<kind>, tseq; r:<id>, q:claimed, q:wait, q:ready, q:n,
    qk:<session key>, runs:running, runs:queued
  Returns 0 when `worker` does not hold `id`, else 1; then the queue's counts.
]]
local P = ARGV[1]
--- @include "restatus"
--- @include "ready"
--- @include "holder"
--- @include "queueCounts"

local op, id, w, now = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local t, mine = holder(id, w)
local c
if not mine then c = counts() return {0, c[1], c[2]} end
if t then
  local key, kind = redis.call('HGET', t, 'key'), redis.call('HGET', t, 'kind')
  local tq = P..'tq:'..kind
  if op == 'complete' then
    redis.call('DEL', P..'tid:'..id)
    local behind = redis.call('HGET', t, 'behind')
    if behind then
      local nid = 'task-'..redis.call('INCR', P..'tseq')
      redis.call('HSET', t, 'id', nid, 'until', behind, 'att', 0)
      redis.call('HDEL', t, 'w', 'i', 'err', 'behind')
      redis.call('SET', P..'tid:'..nid, t)
      redis.call('ZADD', tq, behind, key)
    else
      redis.call('DEL', t)
      redis.call('ZREM', tq, key)
    end
  else
    local at = string.format('%.0f', now)
    if op == 'fail' then
      at = ARGV[6]
      redis.call('HINCRBY', t, 'att', 1)
      redis.call('HSET', t, 'err', ARGV[7])
    elseif op == 'extend' then
      at = string.format('%.0f', now + tonumber(ARGV[6]))
    end
    if op ~= 'extend' then redis.call('HDEL', t, 'w', 'i') end
    redis.call('HSET', t, 'until', at)
    redis.call('ZADD', tq, at, key)
  end
  c = counts()
  return {1, c[1], c[2]}
end
local r = P..'r:'..id
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
