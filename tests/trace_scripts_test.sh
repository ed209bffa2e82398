#!/usr/bin/env bash
# scripts/campaign/journal_positions.py and scripts/campaign/trace_costs.py on a real tiny campaign
# (Kalah(5,3) empty-capture, its value, jobs of 1000 nodes so that there are splits and
# two or more passes):
# - every bound record journal_positions.py decodes is re-tested by `kalah query --position
#   P --prove` and must give the record's answer (a wrong decoding of the pits, the side or
#   the claim fails here); the split records' count and the trace's pass column agree;
# - trace_costs.py's per-pass jobs, splits and nodes add up to the campaign's own totals;
# - a journal with a damaged record is read up to it; bad files are one line and exit 2.
# Usage: trace_scripts_test.sh KALAH PYTHON3
set -euo pipefail
kalah=$1
py=$2
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d /tmp/kalah_trace_scripts.XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$kalah" campaign --pits 5 --seeds 3 --rule empty-capture --db /nonexistent --memory-db off \
    --tt-mb 16 --threads 1 --job-nodes 1000 -q --json --dir "$dir/c" >"$dir/c.json" 2>/dev/null

"$py" "$src/scripts/campaign/journal_positions.py" "$dir/c/journal.kcj" --trace "$dir/c/trace.csv" \
    >"$dir/records.txt"
"$py" - "$dir/c.json" "$dir/records.txt" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
assert lines[0].startswith("# Kalah(5,3) empty-capture"), lines[0]
recs = [l.split() for l in lines[1:]]
assert len(recs) == run["jobs"], (len(recs), run["jobs"])
assert sum(1 for r in recs if r[1] == "split") == run["splits"]
assert all(r[6] != "-" for r in recs)          # every record has its pass from the trace
assert len({r[6] for r in recs}) >= 2, "one pass only: no refutation"
PY
checked=0
while read -r idx kind beta result seeds nodes pass pos; do
    [ "$idx" = "#" ] && continue
    [ "$kind" = bound ] || continue
    # The record's claim: v >= result when result >= beta, else v <= result.
    if [ "$result" -ge "$beta" ]; then claim="v>=$result"; else claim="v<=$result"; fi
    out=$("$kalah" query --position "$pos" --rule empty-capture --prove "$claim" \
        --db /nonexistent --memory-db off --tt-mb 16 --threads 1 -q --json 2>/dev/null)
    "$py" -c 'import json, sys; j = json.loads(sys.argv[1]); assert j["proved"], (sys.argv[2], j)' \
        "$out" "$idx $claim $pos"
    checked=$((checked + 1))
done <"$dir/records.txt"
[ "$checked" -ge 20 ] || { echo "only $checked bound records"; exit 1; }

"$py" "$src/scripts/campaign/trace_costs.py" "$dir/c/trace.csv" --json >"$dir/costs.json"
"$py" - "$dir/c.json" "$dir/costs.json" "$dir/c/trace.csv" <<'PY'
import csv, json, sys
run = json.load(open(sys.argv[1])); costs = json.load(open(sys.argv[2]))
rows = list(csv.DictReader(open(sys.argv[3])))
assert sum(p["jobs"] for p in costs.values()) == run["jobs"]
assert sum(p["splits"] for p in costs.values()) == run["splits"]
assert sum(p["nodes"] for p in costs.values()) == sum(int(r["nodes"]) for r in rows)
for beta, p in costs.items():
    by = p["by_depth"]
    assert sum(v["splits"] + v["bound"] for v in by.values()) == p["jobs"]
    assert sum(v["split_nodes"] for v in p["by_seeds"].values()) == p["split_nodes"]
    assert p["split_children_cheap"] <= p["split_children_jobs"]
PY
"$py" "$src/scripts/campaign/trace_costs.py" "$dir/c/trace.csv" >"$dir/costs.txt"
grep -q "^pass v >= " "$dir/costs.txt"

# turn_costs.py: the first turns of --status, every record charged once (jobs and nodes add
# up to the journal's), the root's own records to "(root)".
turns=$("$kalah" campaign --status --dir "$dir/c" --json --db /nonexistent 2>/dev/null |
    "$py" -c 'import json, sys; print(",".join(t["turn"] for t in json.load(sys.stdin)["turns"]))')
[ -n "$turns" ] || { echo "no first turns"; exit 1; }
"$py" "$src/scripts/campaign/turn_costs.py" "$dir/c/journal.kcj" "$dir/c/trace.csv" --turns "$turns" \
    --kalah "$kalah" --json >"$dir/turns.json"
"$py" - "$dir/c.json" "$dir/turns.json" "$dir/c/trace.csv" "$turns" <<'PY'
import csv, json, sys
run = json.load(open(sys.argv[1])); t = json.load(open(sys.argv[2]))
rows = list(csv.DictReader(open(sys.argv[3])))
jobs = sum(v["jobs"] for passes in t.values() for v in passes.values())
nodes = sum(v["nodes"] for passes in t.values() for v in passes.values())
assert jobs == run["jobs"], (jobs, run["jobs"])
assert nodes == sum(int(r["nodes"]) for r in rows)
assert "(unplaced)" not in t, t.get("(unplaced)")
assert "(root)" in t
assert set(t) - {"(root)"} <= set(sys.argv[4].split(",")) | {
    " ".join(x.split()[:i]) for x in sys.argv[4].split(",") for i in range(1, len(x.split()))}
PY

# A damaged record ends the good part: the records before it only.
n=$(($(wc -l <"$dir/records.txt") - 1))
cp "$dir/c/journal.kcj" "$dir/bad.kcj"
printf '\x07' | dd of="$dir/bad.kcj" bs=1 seek=$((64 + 48 * 2)) conv=notrunc status=none
m=$("$py" "$src/scripts/campaign/journal_positions.py" "$dir/bad.kcj" | tail -n +2 | wc -l)
[ "$m" -eq 2 ] || { echo "damaged journal: $m records listed, want 2 (of $n)"; exit 1; }
# Not a journal, not a trace: one line on stderr, exit 2.
echo "not a journal" >"$dir/junk"
for cmd in "journal_positions.py $dir/junk" "trace_costs.py $dir/junk" \
           "journal_positions.py $dir/missing" "trace_costs.py $dir/c/trace.csv --pass 99"; do
    set +e
    err=$("$py" "$src/scripts/campaign/"$cmd 2>&1 >/dev/null)
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || { echo "$cmd: exit $rc, want 2"; exit 1; }
    [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || { echo "$cmd: stderr '$err'"; exit 1; }
done
echo "trace scripts: $checked bound records re-tested, every pass's sums equal the campaign's"
