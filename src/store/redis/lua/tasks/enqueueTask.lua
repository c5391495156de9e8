--[[
  enqueueTask: a task of `kind` for `key`, due at `runAt`. While one of the same kind and key waits
  unclaimed, the two are one (due at the earlier time); while it is claimed, the new one waits behind
  it (`behind`), and later ones coalesce into that.

  ARGV: prefix, kind, key, runAt
  Keys: t:<kind>:<key>, tseq, tid:<id>, tq:<kind>
  Returns when the waiting task is due.
]]
local P = ARGV[1]

local kind, key, runAt = ARGV[2], ARGV[3], tonumber(ARGV[4])
local t = P..'t:'..kind..':'..key
local id = redis.call('HGET', t, 'id')
if not id then
  id = 'task-'..redis.call('INCR', P..'tseq')
  redis.call('HSET', t, 'id', id, 'kind', kind, 'key', key, 'until', ARGV[4], 'att', 0)
  redis.call('SET', P..'tid:'..id, t)
  redis.call('ZADD', P..'tq:'..kind, ARGV[4], key)
  return ARGV[4]
end
local field = redis.call('HEXISTS', t, 'w') == 1 and 'behind' or 'until'
local at = redis.call('HGET', t, field)
if not at or tonumber(at) > runAt then at = ARGV[4] end
redis.call('HSET', t, field, at)
if field == 'until' then redis.call('ZADD', P..'tq:'..kind, at, key) end
return at
