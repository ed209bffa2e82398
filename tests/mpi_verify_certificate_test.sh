#!/usr/bin/env bash
# `kalah verify-certificate` under mpirun: rank 0 keeps the leaf journal and hands the
# leaves to the other ranks (each on a worker's solver with its table emptied first). On
# certificates of small campaigns (both rules) every leaf gets the outcome it gets in one
# process, with the same node count (a worker's emptied table is a fresh solver's), with and
# without a node budget; a resumed run re-tries only the leaves over the budget; a leaf whose
# claim is made false is refuted (exit 1, named); --leaf-seconds is refused under mpirun.
# Usage: mpi_verify_certificate_test.sh KALAH MPIRUN (empty: none found; no-mpi-build: kalah
# built without MPI). Exit 77 (skipped) where there is no mpirun or no MPI build.
set -euo pipefail
kalah=$1
mpirun=${2:-}
# shellcheck source=tests/mpi_skip.sh
source "$(dirname "$0")/mpi_skip.sh"
dir=$(mktemp -d /tmp/kalah_mpi_verify.XXXXXX)
trap 'rm -rf "$dir"' EXIT
run() { "$mpirun" --oversubscribe --allow-run-as-root -np "$@"; }
common="--db /nonexistent --tt-mb 16 --threads 1"

# "node outcome nodes" of every leaf, in leaf order, from verify-certificate's JSON.
outcomes() {
    python3 -c '
import json, sys
j = json.load(sys.stdin)
for l in j["per_leaf"]:
    print(l["node"], l["outcome"], l["nodes"])
print("ranks", j["ranks"])'
}
# verify-certificate's JSON (ARGS after the rank count; 1: one process, no mpirun); exit 0
# or 3 (leaves over the budget) expected, anything else fails the test.
verify_json() {
    local np=$1 status=0 out
    shift
    if [ "$np" = 1 ]; then
        out=$("$kalah" verify-certificate "$@" --json -q 2>/dev/null) || status=$?
    else
        out=$(run "$np" "$kalah" verify-certificate "$@" --json -q 2>/dev/null) || status=$?
    fi
    if [ $status -ne 0 ] && [ $status -ne 3 ]; then
        echo "FAIL: verify-certificate on $np ranks $*: exit $status" >&2
        return 1
    fi
    echo "$out"
}
# The same lines without the last (the rank count), for comparing runs.
leaves_only() { grep -v '^ranks '; }

for rule in standard empty-capture; do
    camp="$dir/camp-$rule"
    "$kalah" campaign --pits 4 --seeds 4 --rule $rule --job-nodes 2000 $common -q --json \
        --dir "$camp" >/dev/null 2>&1
    cert="$dir/$rule.kcert"
    "$kalah" campaign --certificate "$cert" --dir "$camp" --db /nonexistent >/dev/null 2>&1
    leaves=$(grep -c ' job ' "$cert")
    [ "$leaves" -ge 4 ] || { echo "FAIL: $rule: only $leaves job leaves to hand out"; exit 1; }
    for budget in 0 5000; do
        want=$(verify_json 1 --certificate "$cert" $common --leaf-nodes $budget | outcomes)
        for np in 2 3; do
            got=$(verify_json $np --certificate "$cert" $common --leaf-nodes $budget | outcomes)
            [ "$(echo "$got" | tail -1)" = "ranks $np" ] || {
                echo "FAIL: $rule, $np ranks reported as: $(echo "$got" | tail -1)"; exit 1; }
            if [ "$(echo "$got" | leaves_only)" != "$(echo "$want" | leaves_only)" ]; then
                echo "FAIL: $rule, budget $budget, $np ranks: leaves differ from one process"
                diff <(echo "$want") <(echo "$got") || true
                exit 1
            fi
        done
        echo "ok: $rule, --leaf-nodes $budget: $leaves leaves, 2 and 3 ranks as one process"
    done
    # Some leaves over a small budget: they are journaled so; the resumed run without a
    # budget re-tries only those and proves every leaf.
    over=$(echo "$want" | grep -c over-budget || true)
    j="$dir/$rule.klj"
    status=0
    run 3 "$kalah" verify-certificate --certificate "$cert" $common --leaf-nodes 5000 \
        --journal "$j" -q >/dev/null 2>&1 || status=$?
    if [ "$over" -gt 0 ]; then
        [ $status -eq 3 ] || { echo "FAIL: $rule: $over leaves over budget, exit $status, want 3"; exit 1; }
    fi
    [ "$(grep -c ' over-budget ' "$j" || true)" = "$over" ] || {
        echo "FAIL: $rule: the journal does not hold the $over leaves over the budget"; exit 1; }
    summary=$(run 2 "$kalah" verify-certificate --certificate "$cert" $common --journal "$j" -q 2>/dev/null)
    echo "$summary" | grep -q "leaves: $leaves of $leaves re-proved" || {
        echo "FAIL: $rule: resumed: $summary"; exit 1; }
    lines=$(grep -c '^leaf ' "$j")
    [ "$lines" = $((leaves + over)) ] || {
        echo "FAIL: $rule: the journal has $lines lines, want $leaves + $over re-tried"; exit 1; }
    echo "ok: $rule: resumed under mpirun, $over leaves re-tried, every leaf proved"
done

# A leaf whose claim is made false (the ">=" job leaf with the most seeds claims every seed
# of its position: the bound arithmetic still holds, a stronger leaf claim implies its
# parent's), the crc line redone: refuted in one process and on a worker, exit 1, named.
cert="$dir/standard.kcert"
bad="$dir/bad.kcert"
forged=$(python3 - "$cert" "$bad" <<'PY'
import sys, zlib
lines = open(sys.argv[1]).read().splitlines(keepends=True)
best = None
for i, l in enumerate(lines):
    f = l.split()
    if f[0] == "node" and f[2].startswith(">=") and f[4] == "job":
        seeds = sum(int(x) for x in f[3].replace("/", ",").split(","))
        if best is None or seeds > best[1]:
            best = (i, seeds)
if best is None:
    sys.exit("no '>=' job leaf to forge")
i, seeds = best
f = lines[i].split()
f[2] = ">=%d" % seeds
lines[i] = " ".join(f) + "\n"
body = "".join(lines[:-1])
open(sys.argv[2], "w").write(body + "crc32 %08x\n" % (zlib.crc32(body.encode()) & 0xFFFFFFFF))
print(f[1])
PY
)
for np in 1 3; do
    status=0
    if [ $np = 1 ]; then
        err=$("$kalah" verify-certificate --certificate "$bad" $common -q 2>&1 >/dev/null) || status=$?
    else
        err=$(run $np "$kalah" verify-certificate --certificate "$bad" $common -q 2>&1 >/dev/null) || status=$?
    fi
    [ $status -eq 1 ] || { echo "FAIL: a false leaf claim, $np ranks: exit $status, want 1 ($err)"; exit 1; }
    echo "$err" | grep -q "leaf $forged .*the re-proof refutes it" || {
        echo "FAIL: $np ranks: the refuted leaf $forged not named: $err"; exit 1; }
done
echo "ok: a false leaf claim (leaf $forged) refuted in one process and on a worker rank, exit 1"

# A time budget does not reach the workers: refused, one line, exit 2.
status=0
err=$(run 2 "$kalah" verify-certificate --certificate "$cert" $common --leaf-seconds 5 -q 2>&1 >/dev/null) || status=$?
[ $status -ne 0 ] && echo "$err" | grep -q -- "--leaf-seconds does not reach" || {
    echo "FAIL: --leaf-seconds under mpirun: exit $status: $err"; exit 1; }
echo "ok: --leaf-seconds refused under mpirun"
echo "mpi verify-certificate: all passed"
