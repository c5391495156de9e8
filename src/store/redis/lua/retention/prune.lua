--[[
  prune: one batch of retention. What finished, was consumed, was delivered or was received before its
  cutoff goes, at most `limit` of each kind (transcript lines for messages; of a session in use, its
  lines from before the cutoff beyond the newest kept, at most `limit` sessions and lines each). Each
  kind has a sorted set by the time that decides it: `runs:done` (runs finished with nothing left to
  send, by their finish), `outbox:done` (entries sent, skipped or failed, by their last attempt),
  `events:consumedAt`, `sessions` (each session's last write: an idle one's transcript goes whole) and
  `reqs:at`. (The dry run counts the same sets from outside a script: ../../prune.ts.)

  ARGV: prefix, runs cutoff, events cutoff, requests cutoff, limit, session lines kept
  Keys: runs:done, r:<id>, runs, runs:<status>, rcb:<id>; outbox:done, outbox, outbox:failed, d:<id>;
    events:consumedAt, events, events:consumed, e:<id>; sessions, m:<session key>, ms:<session key>,
    prune:sessions; reqs:at, reqs, reqs:hook:<hook>, reqs:status:<status>, req:<id>
  Returns runs, events, messages, deliveries, requests, and 1 when a kind may have more.
]]
local P = ARGV[1]

local runsB, eventsB, reqB, limit, keep = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
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
  redis.call('DEL', P..'rcb:'..id)
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

-- sessions in use: their lines from before the cutoff beyond the newest keep lines (what an agent is
-- shown) go too; a cursor carries the pass over the sessions from one call to the next
local cursorKey = P..'prune:sessions'
local start = tonumber(redis.call('GET', cursorKey) or '0')
local inUse = redis.call('ZRANGEBYSCORE', P..'sessions', runsB, '+inf', 'LIMIT', start, limit)
local cutoff = tonumber(runsB)
local done = #inUse
for i, key in ipairs(inUse) do
  local mk = P..'m:'..key
  local extra = redis.call('LLEN', mk) - keep
  if extra > 0 then
    local bound = math.min(extra, limit)
    local n = 0
    for _, e in ipairs(redis.call('LRANGE', mk, 0, bound - 1)) do
      -- createdAt is the last key of a line's JSON (codec.ts messageJson)
      local at = tonumber(string.match(e, '"createdAt":(%-?[%d%.eE%+]+)}$'))
      if not at or at >= cutoff then break end
      n = n + 1
    end
    messages = messages + n
    if n > 0 then
      redis.call('LTRIM', mk, n, -1)
      redis.call('LTRIM', P..'ms:'..key, n, -1)
    end
    -- cut short by the bound: this session again next call
    if n == bound and bound < extra then done = i - 1; more = 1; break end
  end
end
if done < #inUse or #inUse >= limit then
  more = 1
  redis.call('SET', cursorKey, start + done)
else
  redis.call('DEL', cursorKey)
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
