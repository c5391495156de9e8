--[[
  accept: an accepted request's events, runs (with their queue entries), idempotency key and kept
  request, stored together or not at all. A lone wake that coalesces (coalesce 1) is not stored when
  the newest pending event has its key: the idempotency record is then stored with the coalesced body,
  and it and the kept request name that event instead of the new one.

  ARGV: prefix, events, runs, idempotency (0|1), kept request (0|1), coalesce (0|1), then per event
    (id, source, json, coalescing key or ''), per run (id, session key, json), the idempotency record
    (key, status, body, createdAt, expiresAt, and with coalesce the body if coalesced), the kept
    request (id, hook, status, receivedAt, json without its body, body), then the callback entries
    (see callbacks)
  Keys: e:<id>, events, events:pending, events:src, seq; r:<id>, runs, runs:queued, qk:<session key>,
    q:ready, q:n, q:claimed; i:<key>, idem; req:<id>, reqs, reqs:hook:<hook>, reqs:status:<status>,
    reqs:at; the callback entries' (see callbacks)
  Returns the queue's counts, and the id of the event the wake coalesced into (or false). Fails with
  RUN_TAKEN when a run id is taken, IDEMPOTENCY_TAKEN when the key is held and unexpired, ENTRY_TAKEN
  when a callback entry's id is.
]]
local P = ARGV[1]
--- @include "restatus"
--- @include "addEvent"
--- @include "queueCounts"
--- @include "callbacks"

local ne, nr, idem, kept, co = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1', ARGV[5] == '1', ARGV[6] == '1'
local ev, rn = 7, 7 + ne * 4
local ik = rn + nr * 3
local rk = ik + (idem and (co and 6 or 5) or 0)
local cb = rk + (kept and 6 or 0)
for i = 0, nr - 1 do
  if redis.call('EXISTS', P..'r:'..ARGV[rn + i * 3]) == 1 then return redis.error_reply('RUN_TAKEN a run with this id exists') end
end
if idem then
  local exp = redis.call('HGET', P..'i:'..ARGV[ik], 'expiresAt')
  if exp and tonumber(exp) > tonumber(ARGV[ik + 3]) then return redis.error_reply('IDEMPOTENCY_TAKEN the key was answered already') end
end
if callbacksTaken(cb) then return redis.error_reply('ENTRY_TAKEN an outbox entry with this id exists') end
-- the newest pending event, when it has the lone wake's key
local into = false
if co and ne == 1 and nr == 0 and ARGV[ev + 3] ~= '' then
  local newest = redis.call('ZREVRANGE', P..'events:pending', 0, 0)[1]
  if newest and redis.call('HGET', P..'e:'..newest, 'ck') == ARGV[ev + 3] then into = newest end
end
-- `s` with its last occurrence of `from` (an id) replaced by `to`
local function swapLast(s, from, to)
  local at, from_end, i = nil, nil, 1
  while true do
    local a, b = string.find(s, from, i, true)
    if not a then break end
    at, from_end, i = a, b, b + 1
  end
  if not at then return s end
  return string.sub(s, 1, at - 1)..to..string.sub(s, from_end + 1)
end
if not into then
  for i = 0, ne - 1 do addEvent(ARGV[ev + i * 4], ARGV[ev + i * 4 + 1], ARGV[ev + i * 4 + 2], ARGV[ev + i * 4 + 3]) end
end
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
  local k, body = ARGV[ik], ARGV[ik + 2]
  if into then body = swapLast(ARGV[ik + 5], ARGV[ev], into) end
  redis.call('HSET', P..'i:'..k, 'status', ARGV[ik + 1], 'body', body, 'createdAt', ARGV[ik + 3], 'expiresAt', ARGV[ik + 4])
  redis.call('ZADD', P..'idem', ARGV[ik + 4], k)
end
if kept then
  local id, seq, j = ARGV[rk], redis.call('INCR', P..'seq'), ARGV[rk + 4]
  if into then j = swapLast(j, ARGV[ev], into) end
  redis.call('HSET', P..'req:'..id, 'j', j, 'body', ARGV[rk + 5], 'seq', seq, 'hook', ARGV[rk + 1], 'status', ARGV[rk + 2])
  redis.call('ZADD', P..'reqs', seq, id)
  redis.call('ZADD', P..'reqs:hook:'..ARGV[rk + 1], seq, id)
  redis.call('ZADD', P..'reqs:status:'..ARGV[rk + 2], seq, id)
  redis.call('ZADD', P..'reqs:at', ARGV[rk + 3], id)
end
addCallbacks(cb)
local c = counts()
return { c[1], c[2], into }
