-- The hash of task `id` (nil for a run's id), and whether worker `w` holds its claim.
-- Keys: tid:<id>, t:<kind>:<key>, r:<id>, q:claimed
local function holder(id, w)
  local t = redis.call('GET', P..'tid:'..id)
  if t then return t, redis.call('HGET', t, 'w') == w and redis.call('HGET', t, 'id') == id end
  local r = P..'r:'..id
  return nil, redis.call('HGET', r, 'qw') == w and redis.call('ZSCORE', P..'q:claimed', id) ~= false
end
