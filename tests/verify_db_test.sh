#!/usr/bin/env bash
# checker/verify_db (the independent verifier of layer files, no code shared with kalah):
#  (1) passes on databases of 4 pits, layers 0..10, both rules, built by kalah build-db with
#      1024-entry blocks: in full, with no cache (--cache-mb 0: a block freed when no
#      thread reads it, decoded again at its next use) on one thread or two, sampled, and
#      resumed from its progress file;
#  (2) fails (exit 1, the position named) on a layer rewritten by tests/kdb_edit with its
#      checksums right: (a) one entry of a position in play changed (kalah verify-db finds
#      it too: the checksums are right by the project's reader as well), (b) a terminal
#      entry changed, (c) two adjacent entries swapped, and on an index off by one
#      (--test-rank-offset 1, the verifier's test switch);
#  (3) refuses (exit 2, one line on stderr) a damaged block, a wrong header, a truncated
#      file, a file that is not a layer file and a missing file.
# Usage: verify_db_test.sh KALAH VERIFY_DB KDB_EDIT
set -uo pipefail
kalah=$1
verify=$2
edit=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

db=$tmp/db
for rule in standard empty-capture; do
    "$kalah" build-db --pits 4 --rule $rule --max-seeds 10 --db "$db" --block-entries 1024 \
        --threads 1 -q || { echo "FAIL: build-db $rule" >&2; exit 1; }
done

# run EXPECTED_EXIT NAME ARGS...: runs the verifier, its stdout in $tmp/out, stderr in $tmp/err.
run() {
    local want=$1 name=$2
    shift 2
    "$verify" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ $rc -ne "$want" ]; then
        fail "$name: exit $rc, expected $want"
        sed 's/^/    /' "$tmp/out" "$tmp/err" >&2
        return 1
    fi
    return 0
}

# (1) Intact databases pass.
for rule in standard empty-capture; do
    for opts in "" "--threads 1 --cache-mb 0" "--cache-mb 0" "--sample 2000 --seed 9" \
        "--sample 2000 --seed 9 --cache-mb 0"; do
        # shellcheck disable=SC2086
        if run 0 "intact $rule [$opts]" --db "$db" --pits 4 --rule $rule --layers 0..10 $opts; then
            entries=$(grep -o '^layers .*: [0-9]* entries checked' "$tmp/out" | grep -o '[0-9]* entries')
            echo "(1) $rule [$opts]: $entries checked, no disagreement"
        fi
    done
done
# A full run checks all C(17, 7) = 19448 entries of layer 10 of 4 pits.
run 0 "layer 10 in full" --db "$db" --pits 4 --layers 10 &&
    { grep -q "^layer 10: 19448 entries checked (all of 19448)" "$tmp/out" ||
        fail "layer 10 not reported in full"; }
progress=$tmp/progress.txt
run 0 "progress, first run" --db "$db" --pits 4 --layers 0..6 --progress "$progress"
run 0 "progress, resumed" --db "$db" --pits 4 --layers 0..8 --progress "$progress" &&
    { [ "$(grep -c 'checked earlier' "$tmp/out")" -eq 7 ] || fail "resume did not skip layers 0..6"; }
grep -q '^done 8 entries 6435 ' "$progress" || fail "progress file lacks layer 8"
run 2 "progress of another run" --db "$db" --pits 4 --layers 0..8 --progress "$progress" \
    --sample 10 --seed 1 && grep -q 'progress of another run' "$tmp/err" ||
    fail "progress of other options not refused"
echo "(1) progress file: resumed, other options refused"

# (2) Changed values, checksums right: exit 1 naming the position.
fresh() {  # a copy of the standard database to damage
    rm -rf "$tmp/bad"
    mkdir "$tmp/bad"
    cp "$db"/kalah-m4-standard-s*.kdb "$tmp/bad/"
}
layer() { echo "$tmp/bad/kalah-m4-standard-s$1.kdb"; }
entries_of() { od -An -t u8 -j 16 -N 8 "$1" | tr -d ' '; }
expect_disagreement() {  # NAME LAYER [ARGS...]: exit 1, a disagreement in that layer
    local name=$1 s=$2
    shift 2
    if run 1 "$name" --db "$tmp/bad" --pits 4 --layers 0..10 "$@"; then
        if grep -q "disagreement: .*/0,0/A (layer $s, rank" "$tmp/err"; then
            echo "(2) $name: exit 1, $(head -1 "$tmp/err")"
        else
            fail "$name: no disagreement in layer $s named"
            cat "$tmp/err" >&2
        fi
    fi
}

# (a) A position in play (both rows non-empty) of layer 8 holds another value.
fresh
f=$(layer 8)
r=$(($(entries_of "$f") / 2))
while :; do
    cfg=$("$edit" "$f" config $r 4)
    own=$(cut -d, -f1-4 <<<"$cfg" | tr , +)
    opp=$(cut -d, -f5-8 <<<"$cfg" | tr , +)
    (($((own)) > 0 && $((opp)) > 0)) && break
    r=$((r + 1))
done
v=$("$edit" "$f" get $r)
nv=$((v + 2))
((nv > 8)) && nv=$((v - 2))
"$edit" "$f" set $r $nv || fail "kdb_edit set"
echo "(2a) layer 8 rank $r ($cfg): $v -> $nv"
expect_disagreement "one entry changed" 8
# The project's own reader takes the rewritten file's checksums too and finds the same entry.
"$kalah" verify-db --db "$tmp/bad" --pits 4 --rule standard >"$tmp/kout" 2>&1
grep -q "entry $r (.*) holds $nv, re-derived $v" "$tmp/kout" ||
    { fail "kalah verify-db does not see the changed entry alone"; cat "$tmp/kout" >&2; }

# (b) A terminal entry: the last of layer 9 is 0,0,0,0/0,0,0,9 (the mover's row empty), -9.
fresh
f=$(layer 9)
r=$(($(entries_of "$f") - 1))
[ "$("$edit" "$f" config $r 4)" = "0,0,0,0,0,0,0,9" ] || fail "layer 9's last rank is not 0,0,0,0/0,0,0,9"
[ "$("$edit" "$f" get $r)" = "-9" ] || fail "layer 9's last entry is not -9"
"$edit" "$f" set $r -7
expect_disagreement "terminal entry changed" 9
grep -q "disagreement: 0,0,0,0/0,0,0,9/0,0/A (layer 9, rank $r) holds -7, the rules give -9" \
    "$tmp/err" || fail "terminal: not the position 0,0,0,0/0,0,0,9 named"

# (c) Two adjacent entries of layer 7 that differ, swapped.
fresh
f=$(layer 7)
r=$(($(entries_of "$f") / 3))
while [ "$("$edit" "$f" get $r)" = "$("$edit" "$f" get $((r + 1)))" ]; do r=$((r + 1)); done
"$edit" "$f" swap $r
echo "(2c) layer 7: ranks $r and $((r + 1)) swapped"
expect_disagreement "adjacent entries swapped" 7

# (c') The verifier's own index off by one on the intact database.
fresh
expect_disagreement "index off by one" 1 --test-rank-offset 1

# (3) Damage and wrong input: exit 2, one line on stderr naming the file and the problem.
refuse() {  # NAME PATTERN [ARGS...]
    local name=$1 pattern=$2
    shift 2
    if run 2 "$name" --db "$tmp/bad" --pits 4 --layers 0..10 "$@"; then
        if [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$pattern" "$tmp/err"; then
            echo "(3) $name: exit 2, $(cat "$tmp/err")"
        else
            fail "$name: stderr is not one line matching '$pattern'"
            cat "$tmp/err" >&2
        fi
    fi
}
flip() {  # FILE OFFSET: one byte inverted
    local byte
    byte=$(od -An -t u1 -j "$2" -N 1 "$1" | tr -d ' ')
    printf "$(printf '\\%03o' $((255 - byte)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
fresh
f=$(layer 6)
first_block=$(od -An -t u8 -j 64 -N 8 "$f" | tr -d ' ')
flip "$f" $((first_block + 5))
refuse "a byte of a block flipped, its layer checked" "kalah-m4-standard-s6.kdb: file checksum mismatch"
refuse "a byte of a block flipped, read as a child" "kalah-m4-standard-s6.kdb: block 0 checksum mismatch" \
    --layers 7..10
fresh
flip "$(layer 6)" 12
refuse "header's pit count changed" "kalah-m4-standard-s6.kdb: header says"
fresh
flip "$(layer 6)" 70
refuse "a byte of the block index flipped" "kalah-m4-standard-s6.kdb: header checksum mismatch"
fresh
f=$(layer 5)
truncate -s $(($(stat -c %s "$f") - 3)) "$f"
refuse "truncated file" "kalah-m4-standard-s5.kdb: block 0 runs past the end of the file (truncated)"
fresh
truncate -s 30 "$(layer 5)"
refuse "file shorter than a header" "kalah-m4-standard-s5.kdb: truncated header"
fresh
head -c 300 /dev/urandom >"$(layer 4)"
refuse "not a layer file" "kalah-m4-standard-s4.kdb: wrong magic"
fresh
rm "$(layer 3)"
refuse "missing layer" "kalah-m4-standard-s3.kdb: cannot open"
mkdir -p "$tmp/rule"
cp "$db/kalah-m4-empty-capture-s0.kdb" "$tmp/rule/kalah-m4-standard-s0.kdb"
run 2 "the wrong rule's file" --db "$tmp/rule" --pits 4 --layers 0 &&
    grep -q "kalah-m4-standard-s0.kdb: header says rule 1, expected 0" "$tmp/err" ||
    fail "the wrong rule's file not refused"

if [ $failures -ne 0 ]; then
    echo "$failures failure(s)" >&2
    exit 1
fi
echo "verify_db: all checks passed"
