--[[
  insertHeartbeat: a heartbeat run, stored already `running`, owned by this instance.

  ARGV: prefix, run id, json, startedAt, instance
  Keys: seq, r:<id>, runs, runs:running
]]
local P = ARGV[1]
--- @include "restatus"

local id = ARGV[2]
local r = P..'r:'..id
local seq = redis.call('INCR', P..'seq')
redis.call('HSET', r, 'n', ARGV[3], 'seq', seq, 'kind', 'heartbeat', 'attempts', 1, 'startedAt', ARGV[4], 'owner', ARGV[5])
redis.call('ZADD', P..'runs', seq, id)
restatus(id, r, nil, 'running')
return 1
