#!/usr/bin/env bash
# Plots solve time and nodes against n for each m and rule from results/table.csv into
# results/table.png (log scale). Needs gnuplot (apt-get install gnuplot-nox).
set -euo pipefail
cd "$(dirname "$0")/.."
csv=${1:-results/table.csv}
out=${2:-results/table.png}
command -v gnuplot >/dev/null || { echo "plot_table: gnuplot missing (apt-get install gnuplot-nox)" >&2; exit 2; }
[ -f "$csv" ] || { echo "plot_table: no $csv (run scripts/reproduce_table.py)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One data file per (rule, m): columns n, seconds, nodes (finished cells only).
for rule in standard empty-capture; do
    for m in 1 2 3 4 5 6; do
        awk -F, -v r="$rule" -v m="$m" 'NR > 1 && $3 == r && $1 == m && $4 != "" && $8 > 0 {print $2, $8, $7}' \
            "$csv" > "$tmp/$rule-$m.dat"
    done
done
plots() {  # $1 = rule, $2 = column
    local sep=""
    for m in 1 2 3 4 5 6; do
        if [ -s "$tmp/$1-$m.dat" ]; then
            printf '%s"%s" using 1:%s with linespoints title "m=%s"' "$sep" "$tmp/$1-$m.dat" "$2" "$m"
            sep=", "
        fi
    done
}
gnuplot <<GP
set terminal pngcairo size 1200,900 noenhanced
set output "$out.tmp"
set multiplot layout 2,2 title "Kalah(m,n) solve effort (from $csv)"
set logscale y
set xlabel "n (seeds per pit)"
set key left top
set xrange [0.5:6.5]
set ylabel "seconds"
set title "standard: time"
plot $(plots standard 2)
set title "empty-capture: time"
plot $(plots empty-capture 2)
set ylabel "nodes"
set title "standard: nodes"
plot $(plots standard 3)
set title "empty-capture: nodes"
plot $(plots empty-capture 3)
unset multiplot
GP
mv "$out.tmp" "$out"
echo "wrote $out"
