#!/usr/bin/env bash
# Every first turn's exact value of a board by campaigns rooted at each turn (`kalah
# campaign --moves`, docs/campaign.md), one after another, each started from everything
# proved before it: the first imports the root campaign's journal, each later one the
# journal of the turn before it (--import), so the records accumulate along the chain.
# Each turn runs to its exact value with --guess at the value expected (a published one):
# two passes when it is right. Rerun the same command to resume: a finished turn costs
# nothing, an interrupted one continues from its journal. Stops at the first failing run.
#
# Usage: scripts/campaign/turn_campaigns.sh KALAH ROOT_DIR OUT_DIR 'LINE=GUESS' ... -- CAMPAIGN_ARGS...
#   KALAH          the kalah binary
#   ROOT_DIR       the root campaign's directory (read only: its journal is imported)
#   OUT_DIR        one directory per turn is made here, named after its line ("A1_A3")
#   'LINE=GUESS'   a turn and its expected value (South's final margin): 'A1 A3=2'
#   CAMPAIGN_ARGS  the campaign's own: --pits 6 --seeds 6 --rule R --db DB --threads 2 ...
# Environment: NICE (default "nice -n 19"). Writes OUT_DIR/<line>/{journal.kcj, trace.csv,
# progress.csv, run.json, run.err} and OUT_DIR/summary.txt (one line a turn: its value).
set -euo pipefail
if [ $# -lt 5 ]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 2
fi
kalah=$1
root=$2
out=$3
shift 3
turns=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case $1 in
        *=*) turns+=("$1") ;;
        *) echo "turn_campaigns: '$1' is not LINE=GUESS" >&2; exit 2 ;;
    esac
    shift
done
[ "${1:-}" = "--" ] || { echo "turn_campaigns: expected -- before the campaign's arguments" >&2; exit 2; }
shift
args=("$@")
read -r -a nice_cmd <<<"${NICE:-nice -n 19}"
[ -x "$kalah" ] || { echo "turn_campaigns: $kalah is not executable" >&2; exit 1; }
[ -f "$root/journal.kcj" ] || { echo "turn_campaigns: no journal in $root" >&2; exit 1; }
mkdir -p "$out"
prev=$root
: >"$out/summary.txt.tmp"
for t in "${turns[@]}"; do
    line=${t%=*}
    guess=${t##*=}
    slug=$(echo "$line" | tr -d '+' | tr ' ' '_')
    dir=$out/$slug
    echo "turn_campaigns: $line (guess $guess) in $dir, importing $prev" >&2
    "${nice_cmd[@]}" "$kalah" campaign "${args[@]}" --moves "$line" --guess "$guess" \
        --import "$prev" --dir "$dir" --json >"$dir.json.tmp" 2>>"$out/$slug.err" || {
        echo "turn_campaigns: the campaign of $line stopped (see $out/$slug.err)" >&2
        exit 1
    }
    mv "$dir.json.tmp" "$dir/run.json"
    mv "$out/$slug.err" "$dir/run.err"
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(j["line"], j["value"], j["jobs"], j["campaign_nodes"])' \
        "$dir/run.json" >>"$out/summary.txt.tmp"
    prev=$dir
done
mv "$out/summary.txt.tmp" "$out/summary.txt"
cat "$out/summary.txt"
