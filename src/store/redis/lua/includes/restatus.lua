-- Moves run `id` (its hash `r`) from the index of status `from` (none when nil) to that of `to`.
-- Keys: runs:<from>, runs:<to>
local function restatus(id, r, from, to)
  local seq = redis.call('HGET', r, 'seq')
  if from then redis.call('ZREM', P..'runs:'..from, id) end
  redis.call('ZADD', P..'runs:'..to, seq, id)
  redis.call('HSET', r, 'status', to)
end
