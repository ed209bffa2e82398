#!/usr/bin/env bash
# The committed certificates (results/campaign-*/*.kcert): each passes the independent
# checker (checker/check_certificate.py, no code shared with the solver) and
# verify-certificate's own replay, and is what `campaign --certificate` draws from the
# journal beside it today (byte for byte: a certificate never goes stale). Beside the
# root campaigns' certificates, those of campaigns rooted at a first turn
# (results/campaign-*/turns/<line>/, made with --moves and --import). Usage:
# certificates_test.sh KALAH PYTHON3
set -euo pipefail
kalah=$1
python=$2
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
shopt -s nullglob
for cert in "$root"/results/campaign-*/*.kcert "$root"/results/campaign-*/turns/*/*.kcert; do
    dir=$(dirname "$cert")
    name=$(basename "$cert")
    ok=1
    "$python" "$root/checker/check_certificate.py" --quiet "$cert" || ok=0
    "$kalah" verify-certificate --certificate "$cert" --moves-only --quiet >/dev/null || ok=0
    # win.kcert: the answer to --prove win; value.kcert: the root's bounds.
    prove=()
    [ "$name" = win.kcert ] && prove=(--prove win)
    "$kalah" campaign --certificate "$tmp/$name" --dir "$dir" "${prove[@]}" --db /nonexistent \
        >/dev/null 2>&1 || ok=0
    cmp -s "$cert" "$tmp/$name" || { echo "certificates: $cert differs from what its journal gives now" >&2; ok=0; }
    # A certificate whose leaves were proved for another certificate of the same game
    # (dir/leaf-proofs/: that certificate and its leaf journal, from fresh solvers): every
    # leaf must be reused from there (none left to re-prove under a 1-node budget).
    if [ -d "$dir/leaf-proofs" ] && [ "$name" = value.kcert ]; then
        reuse=()
        for c in "$dir"/leaf-proofs/*.kcert; do reuse+=(--reuse "$c" "${c%.kcert}-leaves.klj"); done
        "$kalah" verify-certificate --certificate "$cert" "${reuse[@]}" --db /nonexistent \
            --leaf-nodes 1 --threads 1 --quiet --json >"$tmp/reuse.json" 2>/dev/null || ok=0
        "$python" -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if j["leaves"] > 0 and j["reused"] == j["leaves"] and j["refuted"] == 0 else 1)' \
            "$tmp/reuse.json" || { echo "certificates: $cert has leaves its leaf-proofs/ do not prove" >&2; ok=0; }
    fi
    if [ $ok -eq 1 ]; then passed=$((passed + 1)); echo "ok   $cert"; else failed=$((failed + 1)); echo "FAIL $cert"; fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
