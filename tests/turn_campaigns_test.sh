#!/usr/bin/env bash
# scripts/campaign/turn_campaigns.sh on Kalah(4,3), both rules: every first turn (A2 gives an extra
# move, so its turns are A2+ A1, A2+ A3, A2+ A4) by campaigns rooted at each, chained by
# --import from the start's campaign:
# - each turn's value is `kalah query --moves LINE`'s (one guess deliberately wrong: the
#   value does not depend on it);
# - each turn's journal starts with every record of the one it imported;
# - a second run adds no record and prints the same values;
# - each turn's certificate (with its line) passes the independent checker, which reads
#   the turn's value as South's margin.
# Usage: turn_campaigns_test.sh KALAH PYTHON3
set -euo pipefail
kalah=$1
py=$2
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d /tmp/kalah_turns.XXXXXX)
trap 'rm -rf "$dir"' EXIT
turns=("A1=-2" "A2+ A1=0" "A2+ A3=0" "A2+ A4=20" "A3=0" "A4=0")
for rule in standard empty-capture; do
    args=(--pits 4 --seeds 3 --rule "$rule" --db /nonexistent --memory-db off --tt-mb 16
          --threads 1 --job-nodes 2000)
    "$kalah" campaign "${args[@]}" -q --dir "$dir/$rule-root" >/dev/null 2>&1
    NICE=env bash "$src/scripts/campaign/turn_campaigns.sh" "$kalah" "$dir/$rule-root" "$dir/$rule" \
        "${turns[@]}" -- "${args[@]}" >"$dir/$rule.out" 2>"$dir/$rule.err" || { cat "$dir/$rule.err" >&2; exit 1; }
    prev=$dir/$rule-root
    while read -r line; do
        turn=${line% * * *}
        read -r value jobs _ <<<"${line#"$turn" }"
        want=$("$kalah" query --pits 4 --seeds 3 --rule "$rule" --db /nonexistent \
            --moves "$turn" --json 2>/dev/null | "$py" -c 'import json, sys; print(json.load(sys.stdin)["value"])')
        [ "$value" = "$want" ] || { echo "turns: $rule $turn: $value, query says $want" >&2; exit 1; }
        slug=$(echo "$turn" | tr -d '+' | tr ' ' '_')
        d=$dir/$rule/$slug
        # The imported records come first, byte for byte in content (their checksums differ:
        # they name the new journal): compare the records' 40 bytes before the checksum.
        "$py" - "$prev/journal.kcj" "$d/journal.kcj" <<'PY'
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
na = (len(a) - 64) // 48
assert (len(b) - 64) // 48 >= na, "fewer records than imported"
for i in range(na):
    ra, rb = a[64 + 48 * i: 64 + 48 * i + 40], b[64 + 48 * i: 64 + 48 * i + 40]
    assert ra == rb, "record %d differs from the imported one" % i
PY
        "$kalah" campaign --certificate "$dir/c.kcert" --dir "$d" --db /nonexistent >/dev/null 2>&1
        "$py" "$src/checker/check_certificate.py" "$dir/c.kcert" >"$dir/check.txt"
        grep -q "^value: Kalah(4,3) under $rule after ${turn//+/} = $value (both bounds proved)" \
            "$dir/check.txt" || { echo "turns: $rule $turn: checker says" >&2; cat "$dir/check.txt" >&2; exit 1; }
        prev=$d
    done <"$dir/$rule/summary.txt"
    [ "$(wc -l <"$dir/$rule/summary.txt")" -eq ${#turns[@]} ]
    # Again: nothing new.
    NICE=env bash "$src/scripts/campaign/turn_campaigns.sh" "$kalah" "$dir/$rule-root" "$dir/$rule" \
        "${turns[@]}" -- "${args[@]}" >"$dir/$rule.again" 2>/dev/null
    cmp -s "$dir/$rule.out" "$dir/$rule.again" || { echo "turns: $rule: a second run differs" >&2; exit 1; }
    echo "ok   $rule: $(tr '\n' ';' <"$dir/$rule/summary.txt")"
done
