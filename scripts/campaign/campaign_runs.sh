#!/usr/bin/env bash
# Kalah(6,5) through `kalah campaign` with one worker (in-process) and two MPI workers, and
# the plain `kalah solve` for the overhead, all single-threaded; then the simulator on the
# two traces (results/campaign.md, "Kalah(6,5) both rules, solve against 1 and 2 workers").
# Runs of hours.
#
# Usage: scripts/campaign/campaign_runs.sh KALAH DB_DIR SCRATCH [RULE]
#   KALAH    the kalah binary, built with MPI (-DKALAH_MPI=ON) for the two-worker run
#   DB_DIR   the endgame database directory (--db), the same for every run
#   SCRATCH  a directory for the results: SCRATCH/6-5-RULE/ must not exist yet
#   RULE     standard (default) or empty-capture
# Environment: TT_MB (table MiB of each solver, default 4096: two workers hold two tables),
# JOB_NODES (job budget, default kalah's), CAMPAIGN_ARGS (more campaign flags, e.g.
# "--budget-growth 1.05"), NICE (default "nice -n 19"), MPIRUN (default
# mpirun), PITS and SEEDS (default 6 and 5; another board for a trial run). Writes solve.json, one.json, two.json (stdout of each run), one/ and two/ (the
# campaign directories: journal.kcj, trace.csv, progress.csv), *.err (progress lines),
# sim.txt and sim.json, and summary.txt.
set -euo pipefail
if [ $# -lt 3 ]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 2
fi
kalah=$(realpath "$1")
db=$2
rule=${4:-standard}
pits=${PITS:-6}
seeds=${SEEDS:-5}
out="$3/$pits-$seeds-$rule"
here=$(cd "$(dirname "$0")" && pwd)
tt=${TT_MB:-4096}
nice_cmd=${NICE:-nice -n 19}
mpirun=${MPIRUN:-mpirun}
[ -x "$kalah" ] || { echo "campaign_runs: $kalah is not executable" >&2; exit 1; }
[ -d "$db" ] || { echo "campaign_runs: $db is not a directory" >&2; exit 1; }
[ -e "$out" ] && { echo "campaign_runs: $out exists (the runs need fresh directories)" >&2; exit 1; }
mkdir -p "$out"
common=(--pits "$pits" --seeds "$seeds" --rule "$rule" --db "$db" --tt-mb "$tt" --threads 1 --json)
# The campaign's own flags: the job budget and CAMPAIGN_ARGS.
flags=()
[ -n "${JOB_NODES:-}" ] && flags=(--job-nodes "$JOB_NODES")
read -r -a extra <<<"${CAMPAIGN_ARGS:-}"
flags+=("${extra[@]}")
stamp() { date -u +%Y-%m-%dT%H:%M:%SZ; }

echo "$(stamp) solve" | tee "$out/log.txt"
$nice_cmd "$kalah" solve "${common[@]}" >"$out/solve.json" 2>"$out/solve.err"
echo "$(stamp) campaign, 1 worker in-process" | tee -a "$out/log.txt"
$nice_cmd "$kalah" campaign "${common[@]}" "${flags[@]}" --dir "$out/one" \
    >"$out/one.json" 2>"$out/one.err"
if command -v "$mpirun" >/dev/null; then
    echo "$(stamp) campaign, 2 MPI workers (mpirun -np 3: the manager and two workers)" |
        tee -a "$out/log.txt"
    $nice_cmd "$mpirun" --oversubscribe --allow-run-as-root -np 3 "$kalah" campaign \
        "${common[@]}" "${flags[@]}" --dir "$out/two" >"$out/two.json" 2>"$out/two.err"
    measured=(--measured "$out/two/trace.csv")
else
    echo "$(stamp) no $mpirun: the two-worker run is left out" | tee -a "$out/log.txt"
    measured=()
fi
echo "$(stamp) simulator" | tee -a "$out/log.txt"
python3 "$here/campaign_sim.py" "$out/one/trace.csv" "${measured[@]}" | tee "$out/sim.txt"
python3 "$here/campaign_sim.py" "$out/one/trace.csv" "${measured[@]}" --json >"$out/sim.json"

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out = sys.argv[1]
def load(name):
    p = os.path.join(out, name)
    return json.load(open(p)) if os.path.exists(p) and os.path.getsize(p) else None
s, one, two = load("solve.json"), load("one.json"), load("two.json")
print(f"solve: value {s['value']}, {s['nodes'] / 1e6:.1f} M nodes, {s['seconds']:.0f} s")
for name, r in (("1 worker", one), ("2 workers", two)):
    if not r:
        continue
    print(f"campaign, {name} (ranks {r['ranks']}): value {r['value']} "
          f"({'same as' if r['value'] == s['value'] else 'NOT'} solve's), "
          f"{r['nodes'] / 1e6:.1f} M nodes ({r['nodes'] / s['nodes']:.2f}x solve), "
          f"{r['seconds']:.0f} s ({r['seconds'] / s['seconds']:.2f}x), jobs {r['jobs']}, "
          f"splits {r['splits']}, passes {r['passes']}")
if one and two:
    print(f"speedup 1 -> 2 workers: {one['seconds'] / two['seconds']:.2f} (wall), "
          f"work {two['nodes'] / one['nodes']:.2f}x the nodes")
PY
echo "$(stamp) done: $out" | tee -a "$out/log.txt"
