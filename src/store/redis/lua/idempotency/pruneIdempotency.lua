--[[
  pruneIdempotency: removes the idempotency records expired by `now`.

  ARGV: prefix, now
  Keys: idem, i:<key>
  Returns how many.
]]
local P = ARGV[1]

local keys = redis.call('ZRANGEBYSCORE', P..'idem', '-inf', ARGV[2])
for _, k in ipairs(keys) do redis.call('DEL', P..'i:'..k) end
redis.call('ZREMRANGEBYSCORE', P..'idem', '-inf', ARGV[2])
return #keys
