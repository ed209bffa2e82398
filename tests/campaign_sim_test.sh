#!/usr/bin/env bash
# scripts/campaign/campaign_sim.py on the trace of a real tiny campaign (Kalah(4,4), jobs of
# 2000 nodes, so that there are splits and several passes): the prediction for one worker is
# the measured wall time (C is calibrated on it), speedups lie between 1 and the critical-
# path bound, the table covers 1..1024 workers; the comparison with a measured trace (two
# MPI workers when the MPI build and mpirun are there, else the one-worker trace itself);
# a torn last line is skipped with one line on stderr, a file that is not a trace is one
# line on stderr and exit 1. Timing values are only compared with each other.
# Usage: campaign_sim_test.sh KALAH SIM MPIRUN (MPIRUN empty or no-mpi-build: no MPI run).
# Exit 77 (skipped) without python3.
set -euo pipefail
kalah=$1
sim=$2
mpirun=${3:-}
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
dir=$(mktemp -d /tmp/kalah_sim_test.XXXXXX)
trap 'rm -rf "$dir"' EXIT
args="--pits 4 --seeds 4 --db /nonexistent --tt-mb 16 --threads 1 --job-nodes 2000 -q --json"

"$kalah" campaign $args --dir "$dir/one" >"$dir/one.json"
python3 - "$dir/one.json" "$dir/one/trace.csv" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
assert len(lines) == 1 + run["jobs_run"], (len(lines), run["jobs_run"])
assert run["splits"] > 0
PY

measured="$dir/one/trace.csv"
if [ -n "$mpirun" ] && [ "$mpirun" != "no-mpi-build" ] && command -v "$mpirun" >/dev/null; then
    "$mpirun" --oversubscribe --allow-run-as-root -np 3 "$kalah" campaign $args \
        --dir "$dir/two" >/dev/null
    measured="$dir/two/trace.csv"
fi
python3 "$sim" "$dir/one/trace.csv" --measured "$measured" --json >"$dir/sim.json"
python3 - "$dir/sim.json" "$measured" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
rows = s["rows"]
assert [r["workers"] for r in rows] == [2 ** k for k in range(11)], rows
assert s["trace_workers"] == 1 and s["passes"] >= 2 and s["jobs"] > 20
assert abs(rows[0]["wall"] - s["measured_wall"]) <= 1e-6 * max(1.0, s["measured_wall"])
for r in rows:
    assert 1 - 1e-9 <= r["speedup_no_extra"] <= s["speedup_bound"] + 1e-9, r
m = s["measured"]
assert m is not None and m["predicted_wall"] > 0 and m["wall"] > 0
if sys.argv[2].endswith("/two/trace.csv"):
    assert m["workers"] == 2, m
    assert s["extra_per_doubling"] >= 0
print(f"ok: {s['jobs']} jobs, {s['passes']} passes, bound {s['speedup_bound']:.2f}; "
      f"{m['workers']} worker(s): predicted {m['predicted_wall_as_measured']:.3f} s, measured {m['wall']:.3f} s")
PY
python3 "$sim" "$dir/one/trace.csv" --measured "$measured" | grep -q "predicted"

# A torn last line: skipped, said once.
cp "$dir/one/trace.csv" "$dir/torn.csv"
tail -n 1 "$dir/one/trace.csv" | head -c 20 >>"$dir/torn.csv"
python3 "$sim" "$dir/torn.csv" --json >/dev/null 2>"$dir/torn.err"
[ "$(wc -l <"$dir/torn.err")" = 1 ] && grep -q "skipped 1 line" "$dir/torn.err" ||
    { echo "FAIL: torn line"; cat "$dir/torn.err"; exit 1; }
# Not a trace: one line, exit 1.
for bad in "" "garbage" "$(head -c 100 "$dir/one/journal.kcj" | tr -d '\0')"; do
    printf '%s' "$bad" >"$dir/bad.csv"
    if python3 "$sim" "$dir/bad.csv" >/dev/null 2>"$dir/bad.err"; then
        echo "FAIL: a file that is not a trace was accepted"; exit 1
    fi
    [ "$(wc -l <"$dir/bad.err")" = 1 ] || { echo "FAIL: not one line"; cat "$dir/bad.err"; exit 1; }
done
python3 "$sim" "$dir/none.csv" >/dev/null 2>"$dir/bad.err" && exit 1
[ "$(wc -l <"$dir/bad.err")" = 1 ]
echo "ok: torn line skipped, bad files refused"
