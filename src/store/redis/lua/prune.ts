/**
 * The retention script (see records.ts for the conventions): what finished, was consumed, was
 * delivered or was received before its cutoff goes, a batch at a time. Each kind has a sorted set by
 * the time that decides it: `runs:done` (runs finished with nothing left to send, by their finish),
 * `outbox:done` (entries sent, skipped or failed, by their last attempt), `events:consumedAt`,
 * `sessions` (each session's last write: an idle one's transcript goes whole) and `reqs:at`.
 */

/**
 * prune: ARGV = prefix, runs cutoff, events cutoff, requests cutoff, limit, dry (0|1), session lines kept.
 * Removes at most `limit` of each kind (sessions for transcripts); with dry, removes nothing and counts
 * everything.
 * Returns runs, events, messages, deliveries, requests, and 1 when a kind may have more.
 */
export const PRUNE = `
local runsB, eventsB, reqB, limit, dry = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6] == '1'
local more = 0
local function older(key, before)
  local ids
  if dry then ids = redis.call('ZRANGEBYSCORE', key, '-inf', '('..before)
  else ids = redis.call('ZRANGEBYSCORE', key, '-inf', '('..before, 'LIMIT', 0, limit) end
  if not dry and #ids >= limit then more = 1 end
  if not dry then for _, id in ipairs(ids) do redis.call('ZREM', key, id) end end
  return ids
end

local runs = older(P..'runs:done', runsB)
if not dry then
  for _, id in ipairs(runs) do
    local r = P..'r:'..id
    local st = redis.call('HGET', r, 'status')
    if st then redis.call('ZREM', P..'runs:'..st, id) end
    redis.call('ZREM', P..'runs', id)
    redis.call('DEL', r)
  end
end

local deliveries = older(P..'outbox:done', runsB)
if not dry then
  for _, id in ipairs(deliveries) do
    redis.call('ZREM', P..'outbox', id)
    redis.call('ZREM', P..'outbox:failed', id)
    redis.call('DEL', P..'d:'..id)
  end
end

local events = older(P..'events:consumedAt', eventsB)
if not dry then
  for _, id in ipairs(events) do
    redis.call('ZREM', P..'events', id)
    redis.call('ZREM', P..'events:consumed', id)
    redis.call('DEL', P..'e:'..id)
  end
end

local messages = 0
for _, key in ipairs(older(P..'sessions', runsB)) do
  messages = messages + redis.call('LLEN', P..'m:'..key)
  if not dry then redis.call('DEL', P..'m:'..key, P..'ms:'..key) end
end

-- sessions in use: their lines from before the cutoff beyond the newest keep lines (what an agent is
-- shown) go too, at most limit sessions and limit lines of each per call; a cursor carries the
-- pass over the sessions from one call to the next
local keep = tonumber(ARGV[7])
local cursorKey = P..'prune:sessions'
local start = 0
local inUse
if dry then inUse = redis.call('ZRANGEBYSCORE', P..'sessions', runsB, '+inf')
else
  start = tonumber(redis.call('GET', cursorKey) or '0')
  inUse = redis.call('ZRANGEBYSCORE', P..'sessions', runsB, '+inf', 'LIMIT', start, limit)
end
local cutoff = tonumber(runsB)
local done = #inUse
for i, key in ipairs(inUse) do
  local mk = P..'m:'..key
  local extra = redis.call('LLEN', mk) - keep
  if extra > 0 then
    local bound = extra
    if not dry and bound > limit then bound = limit end
    local n = 0
    for _, e in ipairs(redis.call('LRANGE', mk, 0, bound - 1)) do
      -- createdAt is the last key of a line's JSON (codec.ts messageJson)
      local at = tonumber(string.match(e, '"createdAt":(%-?[%d%.eE%+]+)}$'))
      if not at or at >= cutoff then break end
      n = n + 1
    end
    messages = messages + n
    if not dry and n > 0 then
      redis.call('LTRIM', mk, n, -1)
      redis.call('LTRIM', P..'ms:'..key, n, -1)
    end
    -- cut short by the bound: this session again next call
    if not dry and n == bound and bound < extra then done = i - 1; more = 1; break end
  end
end
if not dry then
  if done < #inUse or #inUse >= limit then
    more = 1
    redis.call('SET', cursorKey, start + done)
  else
    redis.call('DEL', cursorKey)
  end
end

local requests = older(P..'reqs:at', reqB)
if not dry then
  for _, id in ipairs(requests) do
    local q = P..'req:'..id
    local f = redis.call('HMGET', q, 'hook', 'status')
    redis.call('ZREM', P..'reqs', id)
    if f[1] then redis.call('ZREM', P..'reqs:hook:'..f[1], id) end
    if f[2] then redis.call('ZREM', P..'reqs:status:'..f[2], id) end
    redis.call('DEL', q)
  end
end
return {#runs, #events, messages, #deliveries, #requests, more}
`;
