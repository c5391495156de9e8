-- Marks a pending event consumed by heartbeat run `hb` at `at`; an event not pending is left as it is.
-- Keys: e:<id>, events:pending, events:consumed, events:consumedAt, events:src
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
