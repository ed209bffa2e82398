#!/usr/bin/env bash
# The database builder against girving/kalah's endgame generator (the anchor of issue 49),
# alternated, one thread each, 6 pits, empty-capture, from empty directories: prints one
# line per run with its user and system CPU seconds, wall seconds and peak RSS
# (/usr/bin/time). results/db.md has the figures.
#
# Usage: scripts/bench/builder_pairs.sh KALAH GENERATOR [PAIRS] [K...]
#   KALAH      this project's kalah binary (build/kalah)
#   GENERATOR  girving/kalah's `generator`, built outside the project (`make generator
#              CFLAGS="-O3 -funroll-loops -fcommon -fgnu89-inline -w"` in its checkout)
#   PAIRS      pairs of runs for each K (default 3); K: the top layers (default 20 24)
# The generator is answered `4` (bits an entry, its default, as scripts/bench/peers.py builds
# its files), `c K`, `s`, `q`.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,14p' "$0" >&2
    exit 2
fi
kalah=$(realpath "$1")
generator=$(realpath "$2")
pairs=${3:-3}
shift $(($# < 3 ? $# : 3))
tops=("$@")
[ ${#tops[@]} -eq 0 ] && tops=(20 24)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for k in "${tops[@]}"; do
    for i in $(seq "$pairs"); do
        rm -rf "$work/kalah" "$work/gen" && mkdir "$work/kalah" "$work/gen"
        /usr/bin/time -f "K=$k pair $i kalah: %U user %S sys %e wall %M KB" "$kalah" build-db \
            --pits 6 --rule empty-capture --max-seeds "$k" --db "$work/kalah" --threads 1 -q \
            2>&1 | tail -1
        (cd "$work/gen" && printf '4\nc %d\ns\nq\n' "$k" |
            /usr/bin/time -f "K=$k pair $i generator: %U user %S sys %e wall %M KB" "$generator" \
                endgame.dat 2>&1 | tail -1 | sed 's/^> *//')
    done
done
