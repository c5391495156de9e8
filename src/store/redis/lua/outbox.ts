/**
 * The Lua scripts of the delivery outbox, of idempotency keys and of shared counters (see records.ts
 * for the conventions).
 *
 * A pending delivery belongs to the instance that wrote it (`owner`), which sends it and keeps its
 * retries in memory; `dueDeliveries` gives an instance its own entries and those whose owner is gone
 * (its presence key expired), which it then owns. So a reply is sent by one instance at a time, and
 * the replies of an instance that died are sent by the others.
 */

/**
 * recordDelivery: ARGV = prefix, id, status, attempts, nextAttemptAt, at, fields JSON
 * ({error, sentParts?, parts?, ambiguousPart?, route?}: absent keys keep what is stored), run id. The
 * run's delivery state follows while this entry is the run's delivery (a redelivery replaces it).
 */
export const RECORD_DELIVERY = `
local id, status, attempts, nextAt, at, runId = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[8]
local f = cjson.decode(ARGV[7])
local dk = P..'d:'..id
if redis.call('EXISTS', dk) == 0 then return 0 end
redis.call('HSET', dk, 'status', status, 'attempts', attempts, 'next', nextAt, 'upd', at)
put(dk, 'err', f.error)
if f.sentParts ~= nil then redis.call('HSET', dk, 'sent', f.sentParts) end
if f.parts ~= nil then redis.call('HSET', dk, 'parts', f.parts) end
if f.ambiguousPart ~= nil then put(dk, 'amb', f.ambiguousPart) end
if status == 'pending' then redis.call('ZADD', P..'outbox', nextAt, id) else redis.call('ZREM', P..'outbox', id) end
if status == 'failed' then redis.call('ZADD', P..'outbox:failed', at, id) else redis.call('ZREM', P..'outbox:failed', id) end
-- an entry done with (sent, skipped, failed) is prunable once old enough, and so is its run
local done = status ~= 'pending'
if done then redis.call('ZADD', P..'outbox:done', at, id) else redis.call('ZREM', P..'outbox:done', id) end
local r = P..'r:'..runId
if redis.call('HGET', r, 'dlv') == id then
  redis.call('HSET', r, 'dStatus', status, 'dAttempts', attempts)
  put(r, 'dReason', f.error)
  local finished = redis.call('HGET', r, 'finishedAt')
  if done and finished then redis.call('ZADD', P..'runs:done', finished, runId) end
end
if status == 'sent' and f.route ~= nil then redis.call('HSET', P..'meta', 'mainRoute', f.route) end
return 1
`;

/**
 * dueDeliveries: ARGV = prefix, now, limit, instance. The pending entries due by `now`, earliest
 * first, that are this instance's or whose owner is gone (taken over): each as its hash's fields.
 */
export const DUE_DELIVERIES = `
local now, limit, me = ARGV[2], tonumber(ARGV[3]), ARGV[4]
local out = {}
local alive = {}
local from = 0
while #out < limit do
  local ids = redis.call('ZRANGEBYSCORE', P..'outbox', '-inf', now, 'LIMIT', from, 1000)
  if #ids == 0 then break end
  from = from + #ids
  for _, id in ipairs(ids) do
    local dk = P..'d:'..id
    local owner = redis.call('HGET', dk, 'owner')
    local mine = owner == me
    if not mine and owner then
      if alive[owner] == nil then alive[owner] = redis.call('EXISTS', P..'alive:'..owner) == 1 end
      mine = not alive[owner]
    elseif not owner then
      mine = true
    end
    if mine then
      redis.call('HSET', dk, 'owner', me)
      out[#out + 1] = redis.call('HGETALL', dk)
      if #out >= limit then break end
    end
  end
end
return out
`;

/**
 * countInWindow: ARGV = prefix, key, now, windowMs. Counts one event in the key's fixed window (a new
 * window when none is open or it has ended); returns the count and the window's start. The key expires
 * with its window, by the server's clock.
 */
export const COUNT_IN_WINDOW = `
local k = P..'c:'..ARGV[2]
local now, win = tonumber(ARGV[3]), tonumber(ARGV[4])
local start = redis.call('HGET', k, 'start')
if not start or now - tonumber(start) >= win then
  start = ARGV[3]
  redis.call('HSET', k, 'start', start, 'count', 0)
end
local n = redis.call('HINCRBY', k, 'count', 1)
redis.call('PEXPIRE', k, win)
return {n, start}
`;

/**
 * redeliver: ARGV = prefix, delivery id, run id, entry json, createdAt, channel JSON ({channel, to}),
 * instance. A new pending entry that becomes the run's delivery.
 */
export const REDELIVER = `
local id, runId, at = ARGV[2], ARGV[3], ARGV[5]
local c = cjson.decode(ARGV[6])
redis.call('HSET', P..'d:'..id, 'j', ARGV[4], 'status', 'pending', 'attempts', 0, 'next', at, 'upd', at, 'sent', 0, 'owner', ARGV[7])
redis.call('ZADD', P..'outbox', at, id)
local r = P..'r:'..runId
if redis.call('EXISTS', r) == 1 then
  redis.call('HSET', r, 'dlv', id, 'dStatus', 'pending', 'dAttempts', 0)
  redis.call('HDEL', r, 'dReason')
  put(r, 'dChannel', c.channel)
  put(r, 'dTo', c.to)
  redis.call('ZREM', P..'runs:done', runId)
end
return 1
`;

/** pruneIdempotency: ARGV = prefix, now. Removes the keys expired by `now`; returns how many. */
export const PRUNE_IDEMPOTENCY = `
local keys = redis.call('ZRANGEBYSCORE', P..'idem', '-inf', ARGV[2])
for _, k in ipairs(keys) do redis.call('DEL', P..'i:'..k) end
redis.call('ZREMRANGEBYSCORE', P..'idem', '-inf', ARGV[2])
return #keys
`;
