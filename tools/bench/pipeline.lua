-- pipeline.lua: wrk script sending N requests per write (default 16), so the
-- servers' pipelining paths are measured: wrk -s pipeline.lua URL -- [N] [path].
-- wrk counts each response separately, so its rps is requests, not batches.
init = function(args)
  local depth = tonumber(args[1]) or 16
  local path = args[2] or "/health"
  local one = wrk.format("GET", path)
  local batch = {}
  for i = 1, depth do batch[i] = one end
  req = table.concat(batch)
end

request = function()
  return req
end
