--[[
  recordDelivery: one attempt of a delivery. The run's delivery state follows while this entry is the
  run's delivery (a redelivery replaces it); an entry done with (sent, skipped, failed) is prunable
  once old enough, and so is its run.

  ARGV: prefix, id, status, attempts, nextAttemptAt, at, fields JSON ({error, sentParts?, parts?,
    ambiguousPart?, route?}: absent keys keep what is stored), run id, then the callback entries (see
    callbacks)
  Keys: d:<id>, outbox, outbox:failed, outbox:done, r:<run id>, runs:done, meta; the callback entries'
  Publishes the run's id on `ends` (src/store/redis/ends.ts) when its delivery ended.
  Returns 1, or 0 for an unknown entry (and then writes no callback entry). Fails with ENTRY_TAKEN,
  writing nothing, when a callback entry's id is taken.
]]
local P = ARGV[1]
--- @include "put"
--- @include "callbacks"

local id, status, attempts, nextAt, at, runId = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[8]
local f = cjson.decode(ARGV[7])
local dk = P..'d:'..id
if redis.call('EXISTS', dk) == 0 then return 0 end
if callbacksTaken(9) then return redis.error_reply('ENTRY_TAKEN an outbox entry with this id exists') end
redis.call('HSET', dk, 'status', status, 'attempts', attempts, 'next', nextAt, 'upd', at)
put(dk, 'err', f.error)
if f.sentParts ~= nil then redis.call('HSET', dk, 'sent', f.sentParts) end
if f.parts ~= nil then redis.call('HSET', dk, 'parts', f.parts) end
if f.ambiguousPart ~= nil then put(dk, 'amb', f.ambiguousPart) end
if status == 'pending' then redis.call('ZADD', P..'outbox', nextAt, id) else redis.call('ZREM', P..'outbox', id) end
if status == 'failed' then redis.call('ZADD', P..'outbox:failed', at, id) else redis.call('ZREM', P..'outbox:failed', id) end
local done = status ~= 'pending'
if done then redis.call('ZADD', P..'outbox:done', at, id) else redis.call('ZREM', P..'outbox:done', id) end
local r = P..'r:'..runId
if redis.call('HGET', r, 'dlv') == id then
  redis.call('HSET', r, 'dStatus', status, 'dAttempts', attempts)
  put(r, 'dReason', f.error)
  local finished = redis.call('HGET', r, 'finishedAt')
  if done and finished then redis.call('ZADD', P..'runs:done', finished, runId) end
  if done then redis.call('PUBLISH', P..'ends', runId) end
end
if status == 'sent' and f.route ~= nil then redis.call('HSET', P..'meta', 'mainRoute', f.route) end
addCallbacks(9)
return 1
