#!/usr/bin/env bash
# `kalah campaign` under mpirun: rank 0 the manager, the other ranks workers. With 1, 2 and 3
# ranks on Kalah(4,4) in both rules the value equals `kalah solve`'s and the journal holds
# no (position, beta) job twice; then one rank is killed with SIGKILL mid-run (mpirun ends
# the others) and the same command resumes to the same value, still no job twice.
# Usage: mpi_campaign_test.sh KALAH MPIRUN (empty: none found; no-mpi-build: kalah built
# without MPI). Exit 77 (skipped) where there is no mpirun or no MPI build.
set -euo pipefail
kalah=$1
mpirun=${2:-}
# shellcheck source=tests/mpi_skip.sh
source "$(dirname "$0")/mpi_skip.sh"
dir=$(mktemp -d /tmp/kalah_mpi_test.XXXXXX)
trap 'rm -rf "$dir"' EXIT
run() { "$mpirun" --oversubscribe --allow-run-as-root -np "$@"; }
base="--pits 4 --seeds 4 --tt-mb 16 --threads 1 -q"
solve_args="$base --db /nonexistent"
args="$solve_args --job-nodes 2000"

# The journal's (position, beta) pairs are all different, and it has no torn tail.
check_journal() {
    python3 - "$1" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
assert (len(data) - 64) % 48 == 0, "torn journal"
recs = [data[64 + 48 * i: 64 + 48 * (i + 1)] for i in range((len(data) - 64) // 48)]
pairs = [(r[2:4], r[8:24]) for r in recs]
assert len(pairs) == len(set(pairs)), "a job ran twice"
assert any(r[0] == 2 for r in recs), "no split journaled"
PY
}
value_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)["value"])'; }

for rule in standard empty-capture; do
    want=$("$kalah" solve $solve_args --rule $rule --json 2>/dev/null | value_of)
    for np in 1 2 3; do
        out=$(run $np "$kalah" campaign $args --rule $rule --json --dir "$dir/$rule-$np" 2>/dev/null)
        got=$(echo "$out" | value_of)
        ranks=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ranks"])')
        [ "$ranks" = "$np" ] || { echo "FAIL: $np ranks reported as $ranks"; exit 1; }
        [ "$got" = "$want" ] || { echo "FAIL: $rule, $np ranks: $got, solve says $want"; exit 1; }
        check_journal "$dir/$rule-$np/journal.kcj"
        echo "ok: $rule, $np ranks: $got"
    done
done

# Budgets that grow towards the root reach the workers with their jobs: 2000 x 2^32 nodes
# at the root (--budget-growth 2, no database) finish Kalah(4,4) without a split, where
# 2000 alone splits (above).
want=$("$kalah" solve $solve_args --json 2>/dev/null | value_of)
for np in 2 3; do
    out=$(run $np "$kalah" campaign $args --budget-growth 2 --json --dir "$dir/budget-$np" 2>/dev/null)
    got=$(echo "$out" | value_of)
    splits=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["splits"])')
    [ "$got" = "$want" ] || { echo "FAIL: --budget-growth 2, $np ranks: $got, solve says $want"; exit 1; }
    [ "$splits" = 0 ] || { echo "FAIL: --budget-growth 2, $np ranks: $splits splits, want none"; exit 1; }
    echo "ok: --budget-growth 2, $np ranks: $got, no split"
done

# Bound questions (--prove) under 2 and 3 ranks: proved where the value says so, refuted
# elsewhere; then the exact value resumed over the bound's journal, no job twice.
proved_of() { python3 -c 'import json,sys; print(str(json.load(sys.stdin)["proved"]).lower())'; }
want=$("$kalah" solve $solve_args --json 2>/dev/null | value_of)
for np in 2 3; do
    for q in "v>=$want" "v>=$((want + 2))" "v<=$((want - 2))" "win"; do
        case $q in
            "v>=$want"|win) truth=true ;;
            *) truth=false ;;
        esac
        d="$dir/prove-$np-$RANDOM"
        got=$(run $np "$kalah" campaign $args --prove "$q" --json --dir "$d" 2>/dev/null | proved_of)
        [ "$got" = "$truth" ] || { echo "FAIL: $np ranks, --prove $q: $got, want $truth (value $want)"; exit 1; }
        v=$(run $np "$kalah" campaign $args --json --dir "$d" 2>/dev/null | value_of)
        [ "$v" = "$want" ] || { echo "FAIL: $np ranks, exact over the $q journal: $v, solve says $want"; exit 1; }
        check_journal "$d/journal.kcj"
        echo "ok: $np ranks, --prove $q: $got, then the value $v over its journal"
    done
done

# A worker whose endgame database is not the manager's: refused before any job, one line.
"$kalah" build-db --pits 4 --max-seeds 8 --db "$dir/db" -q >/dev/null 2>&1
if "$mpirun" --oversubscribe --allow-run-as-root -np 1 "$kalah" campaign $base --job-nodes 2000 \
        --db "$dir/db" --dir "$dir/mixed" : -np 1 "$kalah" campaign $args --dir "$dir/mixed" \
        >"$dir/mixed.out" 2>"$dir/mixed.err"; then
    echo "FAIL: ranks with different databases ran"; exit 1
fi
grep -q "rank 1's endgame database differs from rank 0's" "$dir/mixed.err" ||
    { echo "FAIL: no line naming the rank whose database differs"; cat "$dir/mixed.err"; exit 1; }
echo "ok: a rank with another database is refused"

# SIGKILL of one rank (a worker or the manager) at a random moment, then resume.
d="$dir/killed"
for attempt in 1 2 3 4 5; do
    run 3 "$kalah" campaign $args --dir "$d" >/dev/null 2>&1 &
    launcher=$!
    sleep "0.$((RANDOM % 6 + 2))"
    victim=$(pgrep -P "$launcher" | shuf -n 1 || true)
    [ -n "$victim" ] && kill -9 "$victim" 2>/dev/null || true
    wait "$launcher" || true
done
want=$("$kalah" solve $solve_args --json 2>/dev/null | value_of)
got=$(run 3 "$kalah" campaign $args --json --dir "$d" 2>/dev/null | value_of)
[ "$got" = "$want" ] || { echo "FAIL: after kills: $got, solve says $want"; exit 1; }
check_journal "$d/journal.kcj"
echo "ok: killed ranks five times, resumed to $got"
