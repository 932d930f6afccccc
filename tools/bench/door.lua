-- door.lua: wrk sends a new bearer token on each request, for
-- tools/bench/auth.js's uncached /me: the tokens are the lines of the
-- file named by the script's first argument, taken in turn by all of a
-- thread's connections, so that a token comes back only after the
-- per-core cache (128 entries) has seen the whole file.
-- Usage: wrk ... -s door.lua URL -- TOKENS_FILE
local reqs = {}
local i = 0

function init(args)
	for line in io.lines(args[1]) do
		if #line > 0 then
			reqs[#reqs + 1] = wrk.format(nil, nil, { Authorization = "Bearer " .. line })
		end
	end
end

function request()
	i = i % #reqs + 1
	return reqs[i]
end
