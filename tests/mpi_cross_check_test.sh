#!/usr/bin/env bash
# `kalah campaign --cross-check F` under mpirun: with 3 ranks (two workers) on Kalah(4,4), a
# worker that lies (the test hook --test-lying-rank, mpi/ranks.h) is refused,
# named on stderr, and the campaign still reaches solve's value with a journal that
# `campaign --audit` finds honest; with --cross-check 0 the same lie goes unnoticed (no
# refusal, and the campaign's answer or journal is wrong: the test can fail). Honest
# workers are never refused; with one worker the option is refused as bad input.
# Usage: mpi_cross_check_test.sh KALAH MPIRUN (as mpi_campaign_test.sh; exit 77 skipped).
set -euo pipefail
kalah=$1
mpirun=${2:-}
# shellcheck source=tests/mpi_skip.sh
source "$(dirname "$0")/mpi_skip.sh"
dir=$(mktemp -d /tmp/kalah_cross_check_test.XXXXXX)
trap 'rm -rf "$dir"' EXIT
run() { "$mpirun" --oversubscribe --allow-run-as-root "$@"; }
base="--pits 4 --seeds 4 --tt-mb 16 --threads 1 -q --db /nonexistent"
args="$base --job-nodes 2000"
field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
want=$("$kalah" solve $base --json 2>/dev/null | field value)

# Honest workers, every record checked: the value, no refusal, checks that agreed.
out=$(run -np 3 "$kalah" campaign $args --cross-check 1 --cross-check-seed 7 --json \
      --dir "$dir/honest" 2>"$dir/honest.err")
[ "$(echo "$out" | field value)" = "$want" ] || { echo "FAIL: honest: $out"; exit 1; }
[ "$(echo "$out" | field refused_ranks)" = "[]" ] ||
    { echo "FAIL: an honest worker was refused"; cat "$dir/honest.err"; exit 1; }
[ "$(echo "$out" | field cross_checked)" -gt 0 ] || { echo "FAIL: nothing checked: $out"; exit 1; }
echo "ok: honest workers, every record checked: value $want, none refused"

# Rank 2 lies about every bound; every record checked: refused, the value still right, and
# the journal holds no lie (an audit of every record agrees).
for seed in 1 2; do
    d="$dir/liar-$seed"
    out=$(run -np 3 "$kalah" campaign $args --test-lying-rank 2 --cross-check 1 \
          --cross-check-seed $seed --json --dir "$d" 2>"$d.err")
    [ "$(echo "$out" | field value)" = "$want" ] ||
        { echo "FAIL: liar, seed $seed: $out"; cat "$d.err"; exit 1; }
    [ "$(echo "$out" | field refused_ranks)" = "[2]" ] ||
        { echo "FAIL: the lying rank 2 not refused: $out"; cat "$d.err"; exit 1; }
    grep -q "kalah campaign: cross-check: rank 2 refused: " "$d.err" ||
        { echo "FAIL: no line naming the refused rank"; cat "$d.err"; exit 1; }
    "$kalah" campaign --audit 1000000 --job-nodes 1000000 --tt-mb 16 --threads 1 -q \
        --db /nonexistent --dir "$d" >/dev/null 2>"$d.audit" ||
        { echo "FAIL: the journal of a cross-checked campaign holds a lie"; cat "$d.audit"; exit 1; }
    echo "ok: the lying rank 2 refused (seed $seed), value $want, the journal audited honest"
done

# The same lie with --cross-check 0: not refused, and it did harm (a wrong or failed
# campaign, or a journal the audit refutes): what the cross-check is there to catch.
d="$dir/unchecked"
status=0
out=$(run -np 3 "$kalah" campaign $args --test-lying-rank 2 --cross-check 0 --json \
      --dir "$d" 2>"$d.err") || status=$?
if grep -q "refused" "$d.err"; then echo "FAIL: refused without a cross-check"; exit 1; fi
harmed=0
[ $status -ne 0 ] && harmed=1
[ $status -eq 0 ] && [ "$(echo "$out" | field value)" != "$want" ] && harmed=1
"$kalah" campaign --audit 1000000 --job-nodes 1000000 --tt-mb 16 --threads 1 -q \
    --db /nonexistent --dir "$d" >/dev/null 2>&1 || harmed=1
[ $harmed -eq 1 ] || { echo "FAIL: the lie of rank 2 did no harm: the test cannot fail"; exit 1; }
echo "ok: --cross-check 0: no worker refused, and the lie did harm (campaign exit $status)"

# One worker (2 ranks) or none (no mpirun): the option is refused, one line, status 2.
for launch in "run -np 2" ""; do
    status=0
    $launch "$kalah" campaign $args --cross-check 0.5 --dir "$dir/one" >/dev/null 2>"$dir/one.err" ||
        status=$?
    [ $status -eq 2 ] || { echo "FAIL: one worker, --cross-check 0.5: exit $status"; exit 1; }
    grep -q -- "--cross-check needs two workers or more" "$dir/one.err" ||
        { echo "FAIL: no line saying why"; cat "$dir/one.err"; exit 1; }
done
if "$kalah" campaign $args --cross-check 1.5 --dir "$dir/range" >/dev/null 2>"$dir/range.err"; then
    echo "FAIL: --cross-check 1.5 accepted"; exit 1
fi
echo "ok: --cross-check refused with one worker and outside [0, 1]"
