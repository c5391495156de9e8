-- Stores a pending system event; `ck`, a wake's key for coalescing, may be nil or ''.
-- Keys: seq, e:<id>, events, events:pending, events:src
local function addEvent(id, source, json, ck)
  local seq = redis.call('INCR', P..'seq')
  redis.call('HSET', P..'e:'..id, 'j', json, 'src', source, 'status', 'pending', 'seq', seq)
  if ck and ck ~= '' then redis.call('HSET', P..'e:'..id, 'ck', ck) end
  redis.call('ZADD', P..'events', seq, id)
  redis.call('ZADD', P..'events:pending', seq, id)
  redis.call('HINCRBY', P..'events:src', source, 1)
end
