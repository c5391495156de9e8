/**
 * The Lua scripts of the operator console (SPEC §12): a request kept with what it stored, and a reply
 * sent again. Conventions as in records.ts (prefix first, numbers as decimal strings).
 *
 * A kept request is `rq:<id>` (`j` the request without its body as JSON, `b` the body's bytes, `seq`,
 * `h` hook, `s` status), listed newest first by `seq` in `reqs` and, for the console's filters, in
 * `reqs:h:<hook>`, `reqs:s:<status>` and `reqs:hs:<status>:<hook>`; `reqs:at` orders them by time
 * received, for retention (prune.ts).
 */
import { ACCEPT } from './records.ts';

/**
 * accept with a kept request: ARGV as accept's, then the request's id, hook, status, receivedAt, JSON
 * and body. Accept's own checks run first and write nothing when they fail; the request is written
 * after them in the same script, so it is stored with the request's events and runs or not at all.
 */
export const ACCEPT_KEPT = `
local function accept()
${ACCEPT}
end
local out = accept()
if out.err then return out end
local a = #ARGV - 5
local id, hook, status, at = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
local seq = redis.call('INCR', P..'seq')
redis.call('HSET', P..'rq:'..id, 'j', ARGV[a + 4], 'b', ARGV[a + 5], 'seq', seq, 'h', hook, 's', status)
redis.call('ZADD', P..'reqs', seq, id)
redis.call('ZADD', P..'reqs:h:'..hook, seq, id)
redis.call('ZADD', P..'reqs:s:'..status, seq, id)
redis.call('ZADD', P..'reqs:hs:'..status..':'..hook, seq, id)
redis.call('ZADD', P..'reqs:at', at, id)
return out
`;

/**
 * redeliver: ARGV = prefix, delivery id, run id, the entry's json, createdAt, instance, route JSON
 * ({channel, to}). A new pending entry, owned by this instance, becomes the run's delivery; the
 * earlier entry stays as it was.
 */
export const REDELIVER = `
local id, runId, json, at, me = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local route = cjson.decode(ARGV[7])
local dk = P..'d:'..id
redis.call('HSET', dk, 'j', json, 'status', 'pending', 'attempts', 0, 'next', at, 'upd', at, 'sent', 0, 'owner', me)
redis.call('ZADD', P..'outbox', at, id)
local r = P..'r:'..runId
if redis.call('EXISTS', r) == 0 then return 0 end
redis.call('HSET', r, 'dlv', id, 'dStatus', 'pending', 'dAttempts', 0)
redis.call('HDEL', r, 'dReason')
put(r, 'dChannel', route.channel)
put(r, 'dTo', route.to)
return 1
`;
