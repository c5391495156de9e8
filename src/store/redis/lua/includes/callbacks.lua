-- Entries that send lifecycle events to callbacks (docs/callbacks.md), written with their cause.
-- Their arguments, from index i: the count, then per entry (id, run id or '', json, time, owner).
-- Keys: d:<id>, outbox, rcb:<run id>

-- True when one of the entries' ids is taken: the script then fails before writing anything.
local function callbacksTaken(i)
  for j = 0, tonumber(ARGV[i]) - 1 do
    if redis.call('EXISTS', P..'d:'..ARGV[i + 1 + j * 5]) == 1 then return true end
  end
  return false
end

-- Writes the entries, pending and due at once, owned by the instance that wrote them; a run's are listed
-- under rcb:<run id> (pruned with the run).
local function addCallbacks(i)
  for j = 0, tonumber(ARGV[i]) - 1 do
    local k = i + 1 + j * 5
    local id, runId, at = ARGV[k], ARGV[k + 1], ARGV[k + 3]
    redis.call('HSET', P..'d:'..id, 'j', ARGV[k + 2], 'status', 'pending', 'attempts', 0, 'next', at, 'upd', at, 'sent', 0, 'owner', ARGV[k + 4])
    redis.call('ZADD', P..'outbox', at, id)
    if runId ~= '' then redis.call('ZADD', P..'rcb:'..runId, at, id) end
  end
end
