-- Sets a hash field, or removes it when the value is nil or JSON null.
local function put(h, f, v)
  if v == nil or v == cjson.null then redis.call('HDEL', h, f) else redis.call('HSET', h, f, v) end
end
