/**
 * The retention script (see records.ts for the conventions): what finished, was consumed, was
 * delivered or was received before its cutoff goes, a batch at a time. Each kind has a sorted set by
 * the time that decides it: `runs:done` (runs finished with nothing left to send, by their finish),
 * `outbox:done` (entries sent, skipped or failed, by their last attempt), `events:consumedAt`,
 * `sessions` (each session's last write: an idle one's transcript goes whole) and `reqs:at`.
 */

/**
 * prune: ARGV = prefix, runs cutoff, events cutoff, requests cutoff, limit. Removes at most `limit` of
 * each kind (transcript lines for messages). Returns runs, events, messages, deliveries, requests, and
 * 1 when a kind may have more. (The dry run counts the same sets from outside a script: ../prune.ts.)
 */
export const PRUNE = `
local runsB, eventsB, reqB, limit = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local more = 0
local function older(key, before)
  local ids = redis.call('ZRANGEBYSCORE', key, '-inf', '('..before, 'LIMIT', 0, limit)
  if #ids >= limit then more = 1 end
  for _, id in ipairs(ids) do redis.call('ZREM', key, id) end
  return ids
end

local runs = older(P..'runs:done', runsB)
for _, id in ipairs(runs) do
  local r = P..'r:'..id
  local st = redis.call('HGET', r, 'status')
  if st then redis.call('ZREM', P..'runs:'..st, id) end
  redis.call('ZREM', P..'runs', id)
  redis.call('DEL', r)
end

local deliveries = older(P..'outbox:done', runsB)
for _, id in ipairs(deliveries) do
  redis.call('ZREM', P..'outbox', id)
  redis.call('ZREM', P..'outbox:failed', id)
  redis.call('DEL', P..'d:'..id)
end

local events = older(P..'events:consumedAt', eventsB)
for _, id in ipairs(events) do
  redis.call('ZREM', P..'events', id)
  redis.call('ZREM', P..'events:consumed', id)
  redis.call('DEL', P..'e:'..id)
end

-- transcripts: at most limit lines a batch, a session's oldest first, so a long one takes several
local messages = 0
local idle = redis.call('ZRANGEBYSCORE', P..'sessions', '-inf', '('..runsB, 'LIMIT', 0, limit)
if #idle >= limit then more = 1 end
for _, key in ipairs(idle) do
  local n = redis.call('LLEN', P..'m:'..key)
  local take = math.min(n, limit - messages)
  if take > 0 then
    redis.call('LPOP', P..'m:'..key, take)
    redis.call('LPOP', P..'ms:'..key, take)
  end
  messages = messages + take
  if take < n then more = 1 break end
  redis.call('ZREM', P..'sessions', key)
  redis.call('DEL', P..'ms:'..key)
end

local requests = older(P..'reqs:at', reqB)
for _, id in ipairs(requests) do
  local q = P..'req:'..id
  local f = redis.call('HMGET', q, 'hook', 'status')
  redis.call('ZREM', P..'reqs', id)
  if f[1] then redis.call('ZREM', P..'reqs:hook:'..f[1], id) end
  if f[2] then redis.call('ZREM', P..'reqs:status:'..f[2], id) end
  redis.call('DEL', q)
end
return {#runs, #events, messages, #deliveries, #requests, more}
`;
