/**
 * The Lua scripts of the work queue (see records.ts for the conventions).
 *
 * Runs: each session key has a list of its run ids in the order accepted (`qk:<key>`); its head is
 * the run under way or next. A key whose head is due waits in `q:ready` (scored by the head's seq, so
 * the oldest goes first), one waiting for a retry in `q:wait` (scored by its time), and a claimed head
 * is in `q:claimed` (scored by its lease's end). The claim's holder, instance, attempts and last error
 * are fields of the run's hash (`qw`, `qi`, `qa`, `qe`). A claim whose lease ran out, or whose
 * instance is gone (its presence key expired), is taken back and counted as an attempt.
 *
 * Tasks: one hash per kind and key (`t:<kind>:<key>`) for the task at its head, with the time of the
 * one waiting behind it (`behind`); `tq:<kind>` scores each key by its head's due time or lease end;
 * `tid:<id>` names the hash of a task id. An id with a `tid:` entry is a task's, else a run's.
 */

/** Helpers for claims, prepended after the records' prelude. */
export const QUEUE_PRELUDE = `
local function gone(inst, me)
  return inst ~= me and redis.call('EXISTS', P..'alive:'..inst) == 0
end
local function ready(key)
  local head = redis.call('LINDEX', P..'qk:'..key, 0)
  if head then redis.call('ZADD', P..'q:ready', redis.call('HGET', P..'r:'..head, 'seq'), key) end
end
-- the hash of a task or of a run, and whether \`w\` holds it
local function holder(id, w)
  local t = redis.call('GET', P..'tid:'..id)
  if t then return t, redis.call('HGET', t, 'w') == w and redis.call('HGET', t, 'id') == id end
  local r = P..'r:'..id
  return nil, redis.call('HGET', r, 'qw') == w and redis.call('ZSCORE', P..'q:claimed', id) ~= false
end
`;

/** claim: ARGV = prefix, now, leaseMs, limit, worker, instance. Returns the counts, then six fields per claim. */
export const CLAIM = `
local now, lease, limit, w, me = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], ARGV[6]
local held = redis.call('ZRANGE', P..'q:claimed', 0, -1, 'WITHSCORES')
for j = 1, #held, 2 do
  local id = held[j]
  local r = P..'r:'..id
  local inst = redis.call('HGET', r, 'qi')
  if tonumber(held[j + 1]) <= now or not inst or gone(inst, me) then
    redis.call('ZREM', P..'q:claimed', id)
    redis.call('HINCRBY', r, 'qa', 1)
    redis.call('HDEL', r, 'qw', 'qi')
    ready(redis.call('HGET', r, 'qk'))
  end
end
local due = redis.call('ZRANGEBYSCORE', P..'q:wait', '-inf', now)
for _, key in ipairs(due) do
  redis.call('ZREM', P..'q:wait', key)
  ready(key)
end
local out = {0, 0}
local untilT = string.format('%.0f', now + lease)
while #out < 2 + limit * 6 do
  local top = redis.call('ZPOPMIN', P..'q:ready')
  if #top == 0 then break end
  local key = top[1]
  local list = P..'qk:'..key
  local id = redis.call('LINDEX', list, 0)
  -- a run that ended without its claim ending (a crash between the two) gives way to the next of its key
  while id do
    local st = redis.call('HGET', P..'r:'..id, 'status')
    if st == 'queued' or st == 'running' then break end
    redis.call('LPOP', list)
    redis.call('DECR', P..'q:n')
    id = redis.call('LINDEX', list, 0)
  end
  if id then
    local r = P..'r:'..id
    redis.call('HSET', r, 'qw', w, 'qi', me)
    redis.call('ZADD', P..'q:claimed', untilT, id)
    local f = redis.call('HMGET', r, 'qa', 'qe', 'n')
    out[#out + 1] = id
    out[#out + 1] = key
    out[#out + 1] = f[1] or '0'
    out[#out + 1] = f[2]
    out[#out + 1] = untilT
    out[#out + 1] = f[3]
  end
end
local c = counts()
out[1], out[2] = c[1], c[2]
return out
`;

/**
 * end: ARGV = prefix, op (complete|fail|release|extend), id, worker, now, and for fail the retry time and
 * the error, for extend the lease. Returns 0 when `worker` does not hold `id`, else 1; then the counts.
 */
export const END = `
local op, id, w, now = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local t, mine = holder(id, w)
local c
if not mine then c = counts() return {0, c[1], c[2]} end
if t then
  local key, kind = redis.call('HGET', t, 'key'), redis.call('HGET', t, 'kind')
  local tq = P..'tq:'..kind
  if op == 'complete' then
    redis.call('DEL', P..'tid:'..id)
    local behind = redis.call('HGET', t, 'behind')
    if behind then
      local nid = 'task-'..redis.call('INCR', P..'tseq')
      redis.call('HSET', t, 'id', nid, 'until', behind, 'att', 0)
      redis.call('HDEL', t, 'w', 'i', 'err', 'behind')
      redis.call('SET', P..'tid:'..nid, t)
      redis.call('ZADD', tq, behind, key)
    else
      redis.call('DEL', t)
      redis.call('ZREM', tq, key)
    end
  else
    local at = string.format('%.0f', now)
    if op == 'fail' then
      at = ARGV[6]
      redis.call('HINCRBY', t, 'att', 1)
      redis.call('HSET', t, 'err', ARGV[7])
    elseif op == 'extend' then
      at = string.format('%.0f', now + tonumber(ARGV[6]))
    end
    if op ~= 'extend' then redis.call('HDEL', t, 'w', 'i') end
    redis.call('HSET', t, 'until', at)
    redis.call('ZADD', tq, at, key)
  end
  c = counts()
  return {1, c[1], c[2]}
end
local r = P..'r:'..id
local key = redis.call('HGET', r, 'qk')
if op == 'extend' then
  redis.call('ZADD', P..'q:claimed', string.format('%.0f', now + tonumber(ARGV[6])), id)
else
  redis.call('ZREM', P..'q:claimed', id)
  redis.call('HDEL', r, 'qw', 'qi')
  if op == 'complete' then
    redis.call('HDEL', r, 'qa', 'qe')
    redis.call('LPOP', P..'qk:'..key)
    redis.call('DECR', P..'q:n')
    ready(key)
  elseif op == 'fail' then
    redis.call('HINCRBY', r, 'qa', 1)
    redis.call('HSET', r, 'qe', ARGV[7])
    redis.call('ZADD', P..'q:wait', ARGV[6], key)
  else
    ready(key)
    if redis.call('HGET', r, 'status') == 'running' then
      restatus(id, r, 'running', 'queued')
      local a = tonumber(redis.call('HGET', r, 'attempts') or '0') - 1
      redis.call('HSET', r, 'attempts', a < 0 and 0 or a)
    end
  end
end
c = counts()
return {1, c[1], c[2]}
`;

/** enqueue: ARGV = prefix, kind, key, runAt. Returns when the waiting task is due. */
export const ENQUEUE = `
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
`;

/** claimTasks: ARGV = prefix, kind, worker, instance, now, leaseMs, limit. Five fields per claim. */
export const CLAIM_TASKS = `
local kind, w, me, now, lease, limit = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local tq = P..'tq:'..kind
local out = {}
local entries = redis.call('ZRANGE', tq, 0, -1, 'WITHSCORES')
for j = 1, #entries, 2 do
  if #out >= limit * 5 then break end
  local key = entries[j]
  local t = P..'t:'..kind..':'..key
  local inst = redis.call('HGET', t, 'i')
  if tonumber(entries[j + 1]) <= now or (inst and gone(inst, me)) then
    -- a lease that ran out counts as an attempt
    if inst then redis.call('HINCRBY', t, 'att', 1) end
    local untilT = string.format('%.0f', now + lease)
    redis.call('HSET', t, 'w', w, 'i', me, 'until', untilT)
    redis.call('ZADD', tq, untilT, key)
    local f = redis.call('HMGET', t, 'id', 'att', 'err')
    out[#out + 1] = f[1]
    out[#out + 1] = key
    out[#out + 1] = f[2]
    out[#out + 1] = f[3]
    out[#out + 1] = untilT
  end
end
return out
`;
