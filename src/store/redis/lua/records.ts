/**
 * The Lua scripts that write records: each runs atomically on the server, so a request's events,
 * runs, queue entries and idempotency key are stored together or not at all, whichever instance
 * writes them. Keys are built from the prefix (ARGV[1]); numbers travel as decimal strings (Lua's
 * own number formatting would turn a millisecond time into `1.7e+12`). Key layout: docs/redis.md.
 */

/** Shared helpers, prepended to every script. */
export const PRELUDE = `
local P = ARGV[1]
local function put(h, f, v)
  if v == nil or v == cjson.null then redis.call('HDEL', h, f) else redis.call('HSET', h, f, v) end
end
local function restatus(id, r, from, to)
  local seq = redis.call('HGET', r, 'seq')
  if from then redis.call('ZREM', P..'runs:'..from, id) end
  redis.call('ZADD', P..'runs:'..to, seq, id)
  redis.call('HSET', r, 'status', to)
end
local function addEvent(id, source, json)
  local seq = redis.call('INCR', P..'seq')
  redis.call('HSET', P..'e:'..id, 'j', json, 'src', source, 'status', 'pending', 'seq', seq)
  redis.call('ZADD', P..'events', seq, id)
  redis.call('ZADD', P..'events:pending', seq, id)
  redis.call('HINCRBY', P..'events:src', source, 1)
end
local function consumeEvent(id, hb, at)
  local e = P..'e:'..id
  if redis.call('HGET', e, 'status') ~= 'pending' then return end
  redis.call('HSET', e, 'status', 'consumed', 'at', at, 'hb', hb)
  local seq = redis.call('HGET', e, 'seq')
  redis.call('ZREM', P..'events:pending', id)
  redis.call('ZADD', P..'events:consumed', seq, id)
  redis.call('ZADD', P..'events:consumedAt', at, id)
  redis.call('HINCRBY', P..'events:src', redis.call('HGET', e, 'src'), -1)
end
local function counts()
  local n = tonumber(redis.call('GET', P..'q:n') or '0')
  return {n, redis.call('ZCARD', P..'q:claimed')}
end
`;

/**
 * accept: ARGV = prefix, events, runs, idempotency (0|1), kept request (0|1), then per event (id, source,
 * json), per run (id, session key, json), the idempotency record (key, status, body, createdAt,
 * expiresAt) and the kept request (id, hook, status, receivedAt, json without its body, body).
 * Fails with RUN_TAKEN when a run id is taken, IDEMPOTENCY_TAKEN when the key is held and unexpired.
 * Returns the queue's counts.
 */
export const ACCEPT = `
local ne, nr, idem, kept = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1', ARGV[5] == '1'
local ev, rn = 6, 6 + ne * 3
local ik = rn + nr * 3
local rk = ik + (idem and 5 or 0)
for i = 0, nr - 1 do
  if redis.call('EXISTS', P..'r:'..ARGV[rn + i * 3]) == 1 then return redis.error_reply('RUN_TAKEN a run with this id exists') end
end
if idem then
  local exp = redis.call('HGET', P..'i:'..ARGV[ik], 'expiresAt')
  if exp and tonumber(exp) > tonumber(ARGV[ik + 3]) then return redis.error_reply('IDEMPOTENCY_TAKEN the key was answered already') end
end
for i = 0, ne - 1 do addEvent(ARGV[ev + i * 3], ARGV[ev + i * 3 + 1], ARGV[ev + i * 3 + 2]) end
for i = 0, nr - 1 do
  local id, key = ARGV[rn + i * 3], ARGV[rn + i * 3 + 1]
  local seq = redis.call('INCR', P..'seq')
  local r = P..'r:'..id
  redis.call('HSET', r, 'n', ARGV[rn + i * 3 + 2], 'seq', seq, 'kind', 'hook', 'attempts', 0, 'qk', key, 'qa', 0)
  redis.call('ZADD', P..'runs', seq, id)
  restatus(id, r, nil, 'queued')
  if redis.call('RPUSH', P..'qk:'..key, id) == 1 then redis.call('ZADD', P..'q:ready', seq, key) end
  redis.call('INCR', P..'q:n')
end
if idem then
  local k = ARGV[ik]
  redis.call('HSET', P..'i:'..k, 'status', ARGV[ik + 1], 'body', ARGV[ik + 2], 'createdAt', ARGV[ik + 3], 'expiresAt', ARGV[ik + 4])
  redis.call('ZADD', P..'idem', ARGV[ik + 4], k)
end
if kept then
  local id, seq = ARGV[rk], redis.call('INCR', P..'seq')
  redis.call('HSET', P..'req:'..id, 'j', ARGV[rk + 4], 'body', ARGV[rk + 5], 'seq', seq, 'hook', ARGV[rk + 1], 'status', ARGV[rk + 2])
  redis.call('ZADD', P..'reqs', seq, id)
  redis.call('ZADD', P..'reqs:hook:'..ARGV[rk + 1], seq, id)
  redis.call('ZADD', P..'reqs:status:'..ARGV[rk + 2], seq, id)
  redis.call('ZADD', P..'reqs:at', ARGV[rk + 3], id)
end
return counts()
`;

/** startRun: ARGV = prefix, id, at. */
export const START_RUN = `
local id, at = ARGV[2], ARGV[3]
local r = P..'r:'..id
local st = redis.call('HGET', r, 'status')
if not st then return 0 end
restatus(id, r, st, 'running')
redis.call('HSET', r, 'startedAt', at)
redis.call('HINCRBY', r, 'attempts', 1)
return 1
`;

/** requeueRun: ARGV = prefix, id, refund (0|1). Only a running run. */
export const REQUEUE_RUN = `
local id, refund = ARGV[2], tonumber(ARGV[3])
local r = P..'r:'..id
if redis.call('HGET', r, 'status') ~= 'running' then return 0 end
restatus(id, r, 'running', 'queued')
local a = tonumber(redis.call('HGET', r, 'attempts') or '0') - refund
redis.call('HSET', r, 'attempts', a < 0 and 0 or a)
return 1
`;

/** insertHeartbeat: ARGV = prefix, id, json, startedAt, instance. */
export const INSERT_HEARTBEAT = `
local id = ARGV[2]
local r = P..'r:'..id
local seq = redis.call('INCR', P..'seq')
redis.call('HSET', r, 'n', ARGV[3], 'seq', seq, 'kind', 'heartbeat', 'attempts', 1, 'startedAt', ARGV[4], 'owner', ARGV[5])
redis.call('ZADD', P..'runs', seq, id)
restatus(id, r, nil, 'running')
return 1
`;

/**
 * failInterruptedHeartbeats: ARGV = prefix, at, reason, instance, only-gone (0|1). Heartbeats left
 * running by this instance or by one that is gone; with only-gone, by one that is gone.
 */
export const FAIL_HEARTBEATS = `
local at, reason, me, onlyGone = ARGV[2], ARGV[3], ARGV[4], ARGV[5] == '1'
local n = 0
for _, id in ipairs(redis.call('ZRANGE', P..'runs:running', 0, -1)) do
  local r = P..'r:'..id
  if redis.call('HGET', r, 'kind') == 'heartbeat' then
    local owner = redis.call('HGET', r, 'owner')
    local gone = not owner or redis.call('EXISTS', P..'alive:'..owner) == 0
    if gone or (owner == me and not onlyGone) then
      restatus(id, r, 'running', 'error')
      redis.call('HSET', r, 'finishedAt', at, 'error', reason, 'dStatus', 'skipped', 'dReason', 'heartbeat did not succeed')
      redis.call('ZADD', P..'runs:done', at, id)
      n = n + 1
    end
  end
end
return n
`;

/**
 * finishRun: ARGV = prefix, id, status, finishedAt, texts JSON ({reply, summary, error}), messages,
 * then per message (session key, its content's size in bytes, json without id), then the event (0|1; id, source, json), the
 * delivery JSON ({kind, reason, channel, to} or {kind: 'outbox', id, channel, to}) with the entry's json,
 * its time and the instance, then the consumed ids' count, the heartbeat time, consume-older (0|1) and the ids.
 */
export const FINISH_RUN = `
local id, status, at = ARGV[2], ARGV[3], ARGV[4]
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
return 1
`;
