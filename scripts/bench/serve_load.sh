#!/usr/bin/env bash
# Load figure of `kalah serve` (results/serve.md): requests a second and latency of
# /api/v1/query for positions the endgame database covers, from wrk on loopback.
#   bash scripts/bench/serve_load.sh [DB_DIR] [MAX_SEEDS] [SECONDS] [CONNECTIONS]
# Builds DB_DIR (m=6 standard, layers 0..MAX_SEEDS) if it is missing, starts build/kalah
# serve on a free port, asks for 1000 random positions of m=6 with MAX_SEEDS seeds in pits
# (a Lua script cycles through them), prints wrk's report, stops the server. Needs wrk
# (apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/../.."
db=${1:-/tmp/kalah-serve-load-db}
k=${2:-16}
secs=${3:-10}
conns=${4:-8}
kalah=build/kalah
[ -x "$kalah" ] || { echo "serve_load: build first (bash scripts/setup.sh)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "serve_load: needs wrk (apt-get install wrk)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$kalah build-db --pits 6 --max-seeds "$k" --db "$db" --quiet >/dev/null

# 1000 random positions: K seeds spread over the 12 pits (both rows non-empty), stores
# holding up to 48 seeds, either side to move. Fixed seed: the same list every run.
python3 - "$k" >"$work/load.lua" <<'PY'
import random, sys
k = int(sys.argv[1])
rnd = random.Random(2026)
paths = []
while len(paths) < 1000:
    pits = [0] * 12
    for _ in range(k):
        pits[rnd.randrange(12)] += 1
    if sum(pits[:6]) == 0 or sum(pits[6:]) == 0:
        continue
    sa, sb = rnd.randrange(25), rnd.randrange(25)
    pos = "%s/%s/%d,%d/%s" % (",".join(map(str, pits[:6])), ",".join(map(str, pits[6:])), sa, sb, rnd.choice("AB"))
    paths.append("/api/v1/query?position=" + pos)
print("local paths = {" + ",".join('"%s"' % p for p in paths) + "}")
print("local i = 0")
print("request = function() i = i + 1; return wrk.format('GET', paths[(i % #paths) + 1]) end")
PY

$kalah serve --port 0 --quiet --db "$db" >"$work/out" 2>"$work/err" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do grep -q listening "$work/out" && break; sleep 0.1; done
url=$(sed -n 's/.*listening on \(http[^ ]*\)/\1/p' "$work/out")
url=${url%/}
# One request first: the database opens on first use.
curl -sf "$url/api/v1/query?position=1,1,1,1,1,1/1,1,1,1,1,1/0,0/A" >/dev/null
echo "serve_load: $url, database $db (m=6, layers 0..$k), ${secs} s, $conns connections, wrk 1 thread"
wrk -t1 -c"$conns" -d"${secs}s" --latency -s "$work/load.lua" "$url"
