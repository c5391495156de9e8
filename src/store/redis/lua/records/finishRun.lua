--[[
  finishRun: a run's outcome: its status and texts, its transcript lines, its summary event, its
  delivery (an outbox entry, or skipped with a reason) and the events it consumed, together.

  ARGV: prefix, run id, status, finishedAt, texts JSON ({reply, summary, error, inTok, outTok,
    forwarded}: the token counts as strings or null, the forwarded run's JSON or null), messages,
    then per message (session key, its content's size in bytes, json without id), then the event (0|1; id,
    source, json), the delivery JSON ({kind, reason, channel, to} or {kind: 'outbox', id, channel,
    to}) with the entry's json, its time and the instance, then the consumed ids' count, the
    heartbeat time, consume-older (0|1) and the ids, then the callback entries (see callbacks)
  Keys: r:<id>, runs:<status>, mseq, m:<session key>, ms:<session key>, sessions; the event's (see
    addEvent); d:<delivery id>, outbox, runs:done; the consumed events' (see consumeEvent); the callback
    entries' (see callbacks)
  Publishes the run's id on `ends` (src/store/redis/ends.ts).
  Fails with ENTRY_TAKEN, writing nothing, when a callback entry's id is taken.
]]
local P = ARGV[1]
--- @include "put"
--- @include "restatus"
--- @include "addEvent"
--- @include "consumeEvent"
--- @include "callbacks"

local id, status, at = ARGV[2], ARGV[3], ARGV[4]
-- where the callback entries start: after the messages (3 each), the event (4), the delivery (4) and the consumed ids
local consumedAt = 7 + tonumber(ARGV[6]) * 3 + 8
local cb = consumedAt + 3 + tonumber(ARGV[consumedAt])
if callbacksTaken(cb) then return redis.error_reply('ENTRY_TAKEN an outbox entry with this id exists') end
local r = P..'r:'..id
local texts = cjson.decode(ARGV[5])
local st = redis.call('HGET', r, 'status')
-- the run's own fields; an unknown run gets none (its lines, event and delivery are still written)
local function rset(f, v) if st then put(r, f, v) end end
if st then restatus(id, r, st, status) end
rset('finishedAt', at)
rset('reply', texts.reply)
rset('summary', texts.summary)
rset('error', texts.error)
rset('inTok', texts.inTok)
rset('outTok', texts.outTok)
rset('fwd', texts.forwarded)
local i = 7
for _ = 1, tonumber(ARGV[6]) do
  local key = ARGV[i]
  local mid = redis.call('INCR', P..'mseq')
  redis.call('RPUSH', P..'m:'..key, mid..' '..ARGV[i + 2])
  redis.call('RPUSH', P..'ms:'..key, ARGV[i + 1])
  -- when each session was last written to (pruning takes the transcripts of sessions idle since a cutoff)
  redis.call('ZADD', P..'sessions', 'GT', at, key)
  i = i + 3
end
if ARGV[i] == '1' then addEvent(ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]) end
i = i + 4
local d = cjson.decode(ARGV[i])
if d.kind == 'outbox' then
  local dk = P..'d:'..d.id
  redis.call('HSET', dk, 'j', ARGV[i + 1], 'status', 'pending', 'attempts', 0, 'next', ARGV[i + 2], 'upd', ARGV[i + 2], 'sent', 0, 'owner', ARGV[i + 3])
  redis.call('ZADD', P..'outbox', ARGV[i + 2], d.id)
  rset('dlv', d.id)
  rset('dStatus', 'pending')
  rset('dReason', nil)
else
  rset('dStatus', 'skipped')
  rset('dReason', d.reason)
  -- finished, with nothing left to send: prunable once old enough
  if st then redis.call('ZADD', P..'runs:done', at, id) end
end
rset('dAttempts', 0)
rset('dChannel', d.channel)
rset('dTo', d.to)
i = i + 4
local nc, hbAt, older = tonumber(ARGV[i]), ARGV[i + 1], ARGV[i + 2] == '1'
local minSeq
for j = i + 3, i + 2 + nc do
  local seq = redis.call('HGET', P..'e:'..ARGV[j], 'seq')
  if seq and (not minSeq or tonumber(seq) < minSeq) then minSeq = tonumber(seq) end
  consumeEvent(ARGV[j], id, hbAt)
end
if older and minSeq then
  for _, e in ipairs(redis.call('ZRANGEBYSCORE', P..'events:pending', '-inf', '('..minSeq)) do consumeEvent(e, id, hbAt) end
end
addCallbacks(cb)
if st then redis.call('PUBLISH', P..'ends', id) end
return 1
