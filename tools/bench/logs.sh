#!/usr/bin/env bash
# tools/bench/logs.sh: issue 25's log-throughput line. Requests per second
# with the access log on, stdout read by a fast reader (cat) against stdout
# a pipe nobody reads (the lines drop and are counted), INGOT_THREADS=1 on
# CPU 0 and wrk on CPU 1, in alternating rounds; with the server's CPU per
# request (all its threads, the writer's included). A measurement, not a test.
# Usage: tools/bench/logs.sh [service] [base-service]; a base binary (one
# that writes its lines itself) is measured too: blocked, it stops answering.
# Knobs: BENCH_LOGS_ROUNDS (3), BENCH_LOGS_SECONDS (3), BENCH_LOGS_TARGET (/json).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
new=${1:-$root/build/bin/service}
base=${2:-}
rounds=${BENCH_LOGS_ROUNDS:-3}
secs=${BENCH_LOGS_SECONDS:-3}
target=${BENCH_LOGS_TARGET:-/json}
dir=$(mktemp -d "${TMPDIR:-/tmp}/ingot-logs-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
wait_port() { for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.02; done; return 1; }

tick() { awk '{print $14+$15}' "/proc/$1/stat"; }

# measure BIN free|blocked -> "requests/s server-cpu-us/request dropped"
measure() {
	local bin=$1 mode=$2 port admin fifo=$dir/out reader srv
	port=$(free_port); admin=$(free_port)
	rm -f "$fifo"; mkfifo "$fifo"
	if [ "$mode" = free ]; then cat "$fifo" > /dev/null & else sleep 100000 < "$fifo" & fi
	reader=$!
	PORT=$port HOST=127.0.0.1 INGOT_ADMIN_PORT=$admin INGOT_THREADS=1 INGOT_ACCESS_LOG=1 taskset -c 0 "$bin" > "$fifo" 2>/dev/null &
	srv=$!
	wait_port "$port" || { echo "no listener"; kill "$srv" "$reader"; return; }
	taskset -c 1 wrk -t1 -c50 -d1s "http://127.0.0.1:$port$target" > /dev/null 2>&1 # warm-up
	local out rps dropped a b n cpu
	a=$(tick "$srv")
	out=$(taskset -c 1 timeout $((secs + 10)) wrk -t1 -c50 -d"${secs}s" "http://127.0.0.1:$port$target" 2>&1)
	b=$(tick "$srv")
	rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
	n=$(echo "$out" | awk '/requests in/ {print $1}')
	cpu=$(awk -v t=$((b - a)) -v n="${n:-0}" -v hz="$(getconf CLK_TCK)" 'BEGIN { if (n > 0) printf "%.2f", t * 1e6 / hz / n; else print "-" }')
	dropped=$(curl -s -m 2 "http://127.0.0.1:$admin/metrics" | awk '/^ingot_log_lines_dropped_total/ {print $2}')
	kill -KILL "$srv" 2>/dev/null; wait "$srv" 2>/dev/null
	kill "$reader" 2>/dev/null; wait "$reader" 2>/dev/null
	echo "${rps:-0} $cpu ${dropped:--}"
}

printf '%-6s %-5s %-8s %12s %10s %10s\n' round bin stdout requests/s cpu-us/req dropped
for r in $(seq "$rounds"); do
	for mode in free blocked; do
		printf '%-6s %-5s %-8s %12s %10s %10s\n' "$r" new "$mode" $(measure "$new" "$mode")
		[ -n "$base" ] && printf '%-6s %-5s %-8s %12s %10s %10s\n' "$r" base "$mode" $(measure "$base" "$mode")
	done
done
