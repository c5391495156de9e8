/**
 * Retention's Lua script: one small batch (SPEC §12). Each kind has a sorted set scored by the time
 * that makes it prunable, kept by the scripts that write it:
 *
 * - `runs:done`: finished runs by their finish time (finishRun, failInterruptedHeartbeats);
 * - `events:done`: consumed events by their consumption time (consumeEvent);
 * - `sessions`: session keys by the finish time of the last run that wrote to their transcript (finishRun);
 * - `outbox:done`: sent, skipped and failed deliveries by their last update (recordDelivery);
 * - `reqs:at`: kept requests by the time they were received (console.ts).
 *
 * So a batch reads at most `limit` members below the cutoff of each set (`ZRANGEBYSCORE … LIMIT`) and
 * never walks what is to be kept. A finished run whose reply is still pending is put back at the
 * cutoff: the next pass, with a later cutoff, looks at it again, and this one moves on. (A run's reply
 * is pending while the outbox entry the run names, `dlv`, is.)
 */

/**
 * prune: ARGV = prefix, runs cutoff, events cutoff, requests cutoff, limit. Returns the counts removed
 * (runs, events, messages, deliveries, requests), then 1 when a kind may have more below its cutoff.
 */
export const PRUNE = `
local cutRuns, cutEvents, cutRequests, limit = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local more = 0
local function below(set, cut)
  local ids = redis.call('ZRANGEBYSCORE', P..set, '-inf', '('..cut, 'LIMIT', 0, limit)
  if #ids == limit then more = 1 end
  return ids
end
local FINAL = {ok = true, error = true, timeout = true}

local runs = 0
for _, id in ipairs(below('runs:done', cutRuns)) do
  local r = P..'r:'..id
  local st, dlv = unpack(redis.call('HMGET', r, 'status', 'dlv'))
  if st and FINAL[st] and dlv and redis.call('HGET', P..'d:'..dlv, 'status') == 'pending' then
    redis.call('ZADD', P..'runs:done', cutRuns, id)
  else
    redis.call('ZREM', P..'runs:done', id)
    if st and FINAL[st] then
      redis.call('DEL', r)
      redis.call('ZREM', P..'runs', id)
      redis.call('ZREM', P..'runs:'..st, id)
      runs = runs + 1
    end
  end
end

local events = 0
for _, id in ipairs(below('events:done', cutEvents)) do
  local e = P..'e:'..id
  if redis.call('HGET', e, 'status') == 'consumed' then
    redis.call('DEL', e)
    redis.call('ZREM', P..'events', id)
    redis.call('ZREM', P..'events:consumed', id)
    events = events + 1
  end
  redis.call('ZREM', P..'events:done', id)
end

-- transcripts: at most limit lines, from the front (a session's oldest lines go first)
local messages = 0
for _, key in ipairs(below('sessions', cutRuns)) do
  local left = limit - messages
  if left <= 0 then more = 1 break end
  local n = redis.call('LLEN', P..'m:'..key)
  local take = math.min(n, left)
  if take > 0 then
    redis.call('LPOP', P..'m:'..key, take)
    redis.call('LPOP', P..'ms:'..key, take)
  end
  messages = messages + take
  if take < n then more = 1 end
  if take == n then
    redis.call('ZREM', P..'sessions', key)
    redis.call('DEL', P..'ms:'..key)
  end
end

local deliveries = 0
for _, id in ipairs(below('outbox:done', cutRuns)) do
  local dk = P..'d:'..id
  local st = redis.call('HGET', dk, 'status')
  if st and st ~= 'pending' then
    redis.call('DEL', dk)
    redis.call('ZREM', P..'outbox:failed', id)
    deliveries = deliveries + 1
  end
  redis.call('ZREM', P..'outbox:done', id)
end

local requests = 0
for _, id in ipairs(below('reqs:at', cutRequests)) do
  local k = P..'rq:'..id
  local hook, status = unpack(redis.call('HMGET', k, 'h', 's'))
  if hook then
    redis.call('ZREM', P..'reqs', id)
    redis.call('ZREM', P..'reqs:h:'..hook, id)
    redis.call('ZREM', P..'reqs:s:'..status, id)
    redis.call('ZREM', P..'reqs:hs:'..status..':'..hook, id)
    redis.call('DEL', k)
    requests = requests + 1
  end
  redis.call('ZREM', P..'reqs:at', id)
end

return {runs, events, messages, deliveries, requests, more}
`;
