-- wrk script: replay the requests listed in a file (one `path TAB bearer-token [TAB prefer]` per line) round
-- robin, then print one JSON summary line. Usage: wrk ... -s bench/replay.lua http://127.0.0.1:PORT -- FILE
local requests = {}
local position = 0

function init(args)
  local file = args[1]
  for line in io.lines(file) do
    local path, token, prefer = line:match("^([^\t]+)\t([^\t]+)\t?([^\t]*)$")
    if path then
      local headers = { ["Authorization"] = "Bearer " .. token }
      if prefer ~= "" then
        headers["Prefer"] = prefer
      end
      requests[#requests + 1] = wrk.format("GET", path, headers)
    end
  end
  if #requests == 0 then
    error("no requests in " .. tostring(file))
  end
end

function request()
  position = position % #requests + 1
  return requests[position]
end

function done(summary, latency, _)
  local e = summary.errors
  io.write(string.format(
    'BENCHJSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
