--[[
  dueDeliveries: the pending entries due by `now`, earliest first, that are this instance's or whose
  owner is gone (taken over: this instance owns them from now on).

  A pending delivery belongs to the instance that wrote it (`owner`), which sends it and keeps its
  retries in memory; so a reply is sent by one instance at a time, and the replies of an instance that
  died are sent by the others.

  ARGV: prefix, now, limit, instance
  Keys: outbox, d:<id>, alive:<instance>
  Returns each entry as its hash's fields.
]]
local P = ARGV[1]

local now, limit, me = ARGV[2], tonumber(ARGV[3]), ARGV[4]
local out = {}
local alive = {}
local from = 0
while #out < limit do
  local ids = redis.call('ZRANGEBYSCORE', P..'outbox', '-inf', now, 'LIMIT', from, 1000)
  if #ids == 0 then break end
  from = from + #ids
  for _, id in ipairs(ids) do
    local dk = P..'d:'..id
    local owner = redis.call('HGET', dk, 'owner')
    local mine = owner == me
    if not mine and owner then
      if alive[owner] == nil then alive[owner] = redis.call('EXISTS', P..'alive:'..owner) == 1 end
      mine = not alive[owner]
    elseif not owner then
      mine = true
    end
    if mine then
      redis.call('HSET', dk, 'owner', me)
      out[#out + 1] = redis.call('HGETALL', dk)
      if #out >= limit then break end
    end
  end
end
return out
