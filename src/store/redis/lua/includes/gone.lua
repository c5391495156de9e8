-- True when instance `inst` is not this one (`me`) and its presence key has expired.
-- Keys: alive:<instance>
local function gone(inst, me)
  return inst ~= me and redis.call('EXISTS', P..'alive:'..inst) == 0
end
