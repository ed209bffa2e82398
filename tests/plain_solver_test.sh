#!/usr/bin/env bash
# checker/plain_solver (the second solver, no code shared with kalah) against kalah:
#  (a) exact values of random positions of 4-6 pits, both rules, with and without its table
#      and with and without a small database (6 pits, layers 0..10, 1024-entry blocks, a
#      1 MiB block cache so blocks are evicted and decoded again), equal to `kalah query`;
#  (b) the leaves of certificates that `kalah campaign` writes here all proved, with and
#      without the table (one rooted after a line too); --sample's leaves seeded by the
#      certificate's crc32, a tenth and at least 10; a leaf's claim made false is REFUTED
#      (exit 1); bad input exit 2;
#  (c) a layer file with one byte flipped (in a block, in the index) is exit 2 naming the
#      damage, never a value.
# Usage: plain_solver_test.sh KALAH PLAIN_SOLVER [POSITIONS]
set -uo pipefail
kalah=$1
plain=$2
count=${3:-240}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

db=$tmp/db
for rule in standard empty-capture; do
    "$kalah" build-db --pits 6 --rule $rule --max-seeds 10 --db "$db" --block-entries 1024 \
        --threads 1 -q || { echo "FAIL: build-db $rule" >&2; exit 1; }
done

# (a) Random positions: m pits a side, a few seeds dropped into random pits, both rows
# non-empty. The stores are 0 and South moves, so kalah's value is the pits value.
RANDOM=4848
checked=0
for ((i = 0; i < count; i++)); do
    m=$((4 + RANDOM % 3))
    rule=standard
    ((i % 2)) && rule=empty-capture
    case $m in 4) total=$((3 + RANDOM % 18)) ;; 5) total=$((3 + RANDOM % 16)) ;; *) total=$((3 + RANDOM % 14)) ;; esac
    pits=()
    for ((k = 0; k < 2 * m; k++)); do pits[k]=0; done
    for ((k = 0; k < total; k++)); do j=$((RANDOM % (2 * m))); pits[j]=$((pits[j] + 1)); done
    south=0 north=0
    for ((k = 0; k < m; k++)); do south=$((south + pits[k])); north=$((north + pits[m + k])); done
    ((south == 0)) && pits[RANDOM % m]=1
    ((north == 0)) && pits[m + RANDOM % m]=1
    a=$(IFS=,; echo "${pits[*]:0:m}")
    b=$(IFS=,; echo "${pits[*]:m:m}")
    pos="$a/$b"
    want=$("$kalah" query --position "$pos/0,0/A" --rule $rule --db "$db" --threads 1 --json -q \
        2>"$tmp/err" | grep -o '"value": -\?[0-9]*' | head -1 | grep -o -- '-\?[0-9]*$')
    if [ -z "$want" ]; then
        fail "kalah query $pos $rule: no value ($(head -1 "$tmp/err"))"
        continue
    fi
    for opts in "" "--no-table" "--db $db --cache-mb 1" "--db $db --no-table --cache-mb 1"; do
        # shellcheck disable=SC2086
        got=$("$plain" --position "$pos" --rule $rule --table-mb 8 --seconds 60 $opts | awk '{print $2}')
        [ "$got" = "$want" ] || fail "$pos $rule [$opts]: plain_solver $got, kalah $want"
    done
    checked=$((checked + 1))
done
echo "(a) $checked positions, 4 settings each, against kalah query"

# (b) Certificates of small campaigns: every leaf proved.
run_cert() {  # FILE ARGS...: every leaf proved, exit 0
    local cert=$1
    shift
    local out
    out=$("$plain" --cert "$cert" --table-mb 8 --seconds 60 "$@" 2>&1)
    local rc=$?
    local leaves
    leaves=$(grep -c '^leaf ' <<<"$out")
    if [ $rc -ne 0 ] || [ "$leaves" -eq 0 ] || grep '^leaf ' <<<"$out" | grep -qv ' proved '; then
        fail "$cert [$*]: not every leaf proved (exit $rc)"
        echo "$out" >&2
    else
        echo "(b) $(basename "$cert") [$*]: $leaves leaves proved"
    fi
}
certs=()
for spec in "5 3 empty-capture none" "6 2 standard db" "6 3 empty-capture db" "6 3 standard none"; do
    read -r m n rule usedb <<<"$spec"
    dbarg=/nonexistent
    [ "$usedb" = db ] && dbarg=$db
    dir=$tmp/camp-$m-$n-$rule
    cert=$tmp/c-$m-$n-$rule.kcert
    "$kalah" campaign --pits "$m" --seeds "$n" --rule "$rule" --dir "$dir" --job-nodes 3000 \
        --db "$dbarg" --threads 1 -q >/dev/null 2>&1 &&
        "$kalah" campaign --certificate "$cert" --dir "$dir" --db "$dbarg" >/dev/null 2>&1 ||
        { fail "campaign Kalah($m,$n) $rule"; continue; }
    certs+=("$cert")
    run_cert "$cert" --db "$dbarg"
    run_cert "$cert" --db "$dbarg" --no-table
done

# A certificate of a campaign rooted after a line (its `line` field): every leaf proved.
dir=$tmp/camp-line
cert=$tmp/c-line.kcert
if "$kalah" campaign --pits 6 --seeds 3 --rule standard --moves 'A4 A1' --dir "$dir" \
    --job-nodes 3000 --db "$db" --threads 1 -q >/dev/null 2>&1 &&
    "$kalah" campaign --certificate "$cert" --dir "$dir" --db "$db" >/dev/null 2>&1 &&
    grep -q '^line A4 A1$' "$cert"; then
    certs+=("$cert")
    run_cert "$cert" --db "$db"
else
    fail "campaign Kalah(6,3) standard after A4 A1"
fi

# --sample: a sample nobody chooses: seeded by the certificate's crc32, so the same IDs on
# every run; max(10, ceil(leaves/10)) of the leaves (all when 10 or fewer), each a leaf of
# the certificate, each tried once; --part 1/2 and 2/2 split it between them.
for cert in "${certs[@]}"; do
    all=$(grep -E '^node [0-9]+ [^ ]+ [^ ]+ (job|db)( |$)' "$cert" | awk '{print $2}' | sort -n)
    n=$(wc -w <<<"$all")
    want=$n
    ((n > 10)) && want=$(((n + 9) / 10)) && ((want < 10)) && want=10
    s1=$("$plain" --cert "$cert" --db "$db" --sample --seconds 60 --table-mb 8 2>&1)
    s2=$("$plain" --cert "$cert" --db "$db" --sample --seconds 0.000001 --table-mb 8 2>&1)
    ids1=$(grep '^# sample: ' <<<"$s1" | sed 's/.*leaves: //')
    ids2=$(grep '^# sample: ' <<<"$s2" | sed 's/.*leaves: //')
    crc=$(awk '$1 == "crc32" {print $2}' "$cert")
    tried=$(grep '^leaf ' <<<"$s1" | awk '{print $2}' | sort -n)
    p1=$("$plain" --cert "$cert" --db "$db" --sample --part 1/2 --seconds 60 --table-mb 8 | grep '^leaf ' | awk '{print $2}')
    p2=$("$plain" --cert "$cert" --db "$db" --sample --part 2/2 --seconds 60 --table-mb 8 | grep '^leaf ' | awk '{print $2}')
    if [ -n "$ids1" ] && [ "$ids1" = "$ids2" ] && grep -q "seed $crc " <<<"$s1" &&
        [ "$(tr ',' '\n' <<<"$ids1" | sort -n)" = "$tried" ] &&
        [ "$(wc -w <<<"$tried")" -eq "$want" ] &&
        [ -z "$(comm -23 <(sort <<<"$tried") <(sort <<<"$all"))" ] &&
        [ "$(printf '%s\n%s\n' "$p1" "$p2" | sort -n)" = "$tried" ] &&
        [ -z "$(comm -12 <(sort <<<"$p1") <(sort <<<"$p2"))" ] &&
        grep -q "summary: $want leaves, $want proved, 0 REFUTED" <<<"$s1"; then
        echo "(b) $(basename "$cert") --sample: $want of $n leaves ($ids1), seed $crc, proved; parts $(wc -w <<<"$p1")+$(wc -w <<<"$p2")"
    else
        fail "$(basename "$cert") --sample: want $want of $n leaves; got '$ids1' / '$ids2', tried $(wc -w <<<"$tried"), parts '$p1' '$p2'"
        echo "$s1" >&2
    fi
done

# A leaf's claim made false (its exact value plus 2, or minus 2), the crc32 line rewritten:
# REFUTED, exit 1, the leaf named.
crc32() { gzip -c | tail -c8 | od -An -tx4 -N4 | tr -d ' \n'; }
cert=${certs[0]}
leaf=$(grep -m1 -E ' (job|db) ' "$cert")
read -r _ id _ pos _ <<<"$leaf"
rule=$(awk '$1 == "rule" {print $2}' "$cert")
v=$("$plain" --position "$pos" --rule "$rule" | awk '{print $2}')
bad=$tmp/refuted.kcert
grep -v '^crc32 ' "$cert" | sed "s|^node $id [^ ]* |node $id >=$((v + 2)) |" >"$bad.body"
{ cat "$bad.body"; echo "crc32 $(crc32 <"$bad.body")"; } >"$bad"
out=$("$plain" --cert "$bad" --table-mb 8 --leaves "$id" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q "^leaf $id .* REFUTED v<=$v " <<<"$out" &&
    grep -q "leaf $id REFUTED" <<<"$out"; then
    echo "(b) leaf $id claimed >=$((v + 2)) (value $v): REFUTED, exit 1"
else
    fail "leaf $id claimed >=$((v + 2)) (value $v): exit $rc, $out"
fi
# Bad input: one line on stderr, exit 2.
bad_input() {  # DESCRIPTION ARGS...
    local what=$1
    shift
    "$plain" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ $rc -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || [ -s "$tmp/out" ]; then
        fail "$what: exit $rc, stderr $(cat "$tmp/err")"
    else
        echo "(b) $what: exit 2, $(cat "$tmp/err")"
    fi
}
sed 's/^board 5 3/board 5 4/' "${certs[0]}" >"$tmp/crc.kcert"
bad_input "a certificate changed, its crc32 not" --cert "$tmp/crc.kcert"
head -c 300 "${certs[0]}" >"$tmp/cut.kcert"
bad_input "a certificate cut short" --cert "$tmp/cut.kcert"
bad_input "no such certificate" --cert "$tmp/none.kcert"
bad_input "a malformed position" --position 1,2,x/1,2,3 --rule standard
bad_input "rows of different lengths" --position 1,2,3/1,2 --rule standard
bad_input "an unknown rule" --position 1,2,3/1,2,3 --rule other
bad_input "an unknown option" --position 1,2,3/1,2,3 --rule standard --fast
bad_input "--sample and --leaves" --cert "${certs[0]}" --sample --leaves 1
bad_input "--sample without --cert" --position 1,2,3/1,2,3 --rule standard --sample
bad_input "--part 0/2" --cert "${certs[0]}" --sample --part 0/2
bad_input "--part 3/2" --cert "${certs[0]}" --sample --part 3/2
bad_input "--part 2" --cert "${certs[0]}" --sample --part 2
sed 's/^line A4 A1$/line A4 A9/' "$tmp/c-line.kcert" | grep -v '^crc32 ' >"$tmp/line.body"
{ cat "$tmp/line.body"; echo "crc32 $(crc32 <"$tmp/line.body")"; } >"$tmp/line.kcert"
bad_input "a malformed line field" --cert "$tmp/line.kcert"

# (c) Damaged layer files (one block a layer here): a byte flipped in layer 10's block,
# probed at the root (10 seeds) and from a search (13 seeds); a byte flipped in layer 9's
# block index, found when the database opens.
flip() {  # FILE OFFSET
    local old
    old=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "\\$(printf %03o $((old ^ 0x5a)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
good=$tmp/good
"$kalah" build-db --pits 6 --rule standard --max-seeds 10 --db "$good" --threads 1 -q --no-packed-twins ||
    fail "build-db for (c)"
for case in "block 10 2,1,0,3,1,0/0,1,0,1,0,1" "block 10 2,1,0,3,1,1/0,1,2,0,1,1" "index 9 2,1,0,3,1,0/0,1,0,1,0,1"; do
    read -r where layer pos <<<"$case"
    want=$("$plain" --position "$pos" --rule standard --db "$good" | awk '{print $2}')
    [ "$want" = "$("$plain" --position "$pos" --rule standard | awk '{print $2}')" ] ||
        fail "(c) $pos: the undamaged database gives $want"
    rm -rf "$tmp/bad"
    cp -r "$good" "$tmp/bad"
    file=$tmp/bad/kalah-m6-standard-s$layer.kdb
    size=$(stat -c %s "$file")
    if [ "$where" = block ]; then offset=$((88 + (size - 88) / 2)); else offset=$((64 + 16)); fi
    flip "$file" "$offset"
    "$plain" --position "$pos" --rule standard --db "$tmp/bad" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q 'checksum mismatch (damaged)' "$tmp/err"; then
        echo "(c) $where of layer $layer damaged, $pos: exit 2, $(cat "$tmp/err")"
    else
        fail "(c) $where of layer $layer damaged, $pos: exit $rc, out '$(cat "$tmp/out")', err '$(cat "$tmp/err")'"
    fi
done

if [ $failures -ne 0 ]; then
    echo "$failures failures" >&2
    exit 1
fi
echo "plain-solver: all passed"
