--[[
  endTask: ends the claim of a task: complete (the task waiting behind it, if any, takes its place
  under a new id), fail (due again at the retry time, counted as an attempt), release (due at once) or
  extend (the lease runs `leaseMs` from now).

  ARGV: prefix, op (complete|fail|release|extend), task id, worker, now, and for fail the retry time
    and the error, for extend the lease
  Keys: tid:<id>, t:<kind>:<key>, tq:<kind>, tseq
  Returns 1, or 0 when `worker` does not hold the task's claim.
]]
local P = ARGV[1]

local op, id, w, now = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local t = redis.call('GET', P..'tid:'..id)
if not t or redis.call('HGET', t, 'w') ~= w or redis.call('HGET', t, 'id') ~= id then return 0 end
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
  return 1
end
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
return 1
