--[[
  countInWindow: counts one event in the key's fixed window (a new window when none is open or it has
  ended). The key expires with its window, by the server's clock.

  ARGV: prefix, key, now, windowMs
  Keys: c:<key>
  Returns the count and the window's start.
]]
local P = ARGV[1]

local k = P..'c:'..ARGV[2]
local now, win = tonumber(ARGV[3]), tonumber(ARGV[4])
local start = redis.call('HGET', k, 'start')
if not start or now - tonumber(start) >= win then
  start = ARGV[3]
  redis.call('HSET', k, 'start', start, 'count', 0)
end
local n = redis.call('HINCRBY', k, 'count', 1)
redis.call('PEXPIRE', k, win)
return {n, start}
