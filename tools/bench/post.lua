-- post.lua: wrk script for the validation bench: every request is a POST
-- of one JSON body, with Content-Type and any extra headers; the query
-- string rides in the URL:
--   wrk -s post.lua 'http://127.0.0.1:PORT/validate?page=2&tags=a' -- BODY_FILE [Name: value]... [pipeline=N]
-- Without pipeline=N the request is built once in init and no request()
-- hook exists, so wrk keeps it static (no Lua call per request) and the
-- client core goes to sending. pipeline=N sends N requests per write, as
-- pipeline.lua does for GET; wrk still counts each response.
init = function(args)
  local f = assert(io.open(assert(args[1], "post.lua: body file expected"), "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  local depth = 1
  for i = 2, #args do
    local n = args[i]:match("^pipeline=(%d+)$")
    if n then
      depth = tonumber(n)
    else
      local name, value = args[i]:match("^([^:]+):%s*(.*)$")
      assert(name, "post.lua: header 'Name: value' or pipeline=N expected, got " .. args[i])
      wrk.headers[name] = value
    end
  end
  if depth > 1 then
    local batch = string.rep(wrk.format(), depth)
    request = function() return batch end
  end
end
