-- Marks session `key` due now when it has a run at its head, scored by that run's order.
-- Keys: qk:<key>, r:<head>, q:ready
local function ready(key)
  local head = redis.call('LINDEX', P..'qk:'..key, 0)
  if head then redis.call('ZADD', P..'q:ready', redis.call('HGET', P..'r:'..head, 'seq'), key) end
end
