-- The run queue's figures: runs in the queue (claimed or not), runs claimed.
-- Keys: q:n, q:claimed
local function counts()
  local n = tonumber(redis.call('GET', P..'q:n') or '0')
  return {n, redis.call('ZCARD', P..'q:claimed')}
end
