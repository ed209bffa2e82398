#!/usr/bin/env bash
# ctest api-install: `cmake --install` of the build into a scratch prefix, then a C program
# built against what was installed, once through find_package(kalah) (kalah::kalah) and
# once through pkg-config, each run; the installed `kalah` command; and, given the Python the
# module is built for and KALAH_PYTHON_INSTALL_DIR, the installed Python package imported
# from the prefix in another directory. Usage:
# install_test.sh BUILD_DIR WORK_DIR [PYTHON PYTHON_INSTALL_DIR]
set -euo pipefail
build=$1
work=$2
python=${3:-}
pydir=${4:-}
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null

fail() { echo "FAIL $*" >&2; exit 1; }

"$prefix/bin/kalah" --version | grep -q "^kalah [0-9]*\.[0-9]*\.[0-9]*$" || fail "installed kalah --version"

mkdir -p "$work/consumer"
cat >"$work/consumer/main.c" <<'C'
#include <kalah/probe.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    kalah_db* db;
    kalah_position p;
    kalah_value v;
    if (strcmp(kalah_version(), KALAH_VERSION_STRING) != 0) return 2;
    if (kalah_open(NULL, NULL, &db) != KALAH_OK) return 3;
    if (kalah_start_position(3, 2, &p) != KALAH_OK) return 4;
    if (kalah_value_of(db, &p, KALAH_RULE_STANDARD, NULL, &v) != KALAH_OK) return 5;
    printf("%s %+d\n", kalah_version(), v.value);
    kalah_close(db);
    return 0;
}
C
cat >"$work/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(kalah 0 REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE kalah::kalah)
CM
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null \
    || fail "find_package(kalah) against $prefix"
cmake --build "$work/consumer/build" >/dev/null || fail "building against kalah::kalah"
by_cmake=$("$work/consumer/build/consumer") || fail "the find_package consumer ran"

flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs kalah) || fail "pkg-config kalah"
# shellcheck disable=SC2086
cc -std=c99 -o "$work/consumer/by_pc" "$work/consumer/main.c" $flags \
    -Wl,-rpath,"$prefix/lib" || fail "building with pkg-config's flags"
by_pc=$("$work/consumer/by_pc") || fail "the pkg-config consumer ran"

# The value the installed command finds for Kalah(3,2).
expected="$("$prefix/bin/kalah" --version | cut -d' ' -f2) $("$prefix/bin/kalah" solve --pits 3 --seeds 2 --db "$work/none" --json 2>/dev/null | python3 -c 'import json,sys; print("%+d" % json.load(sys.stdin)["value"])')"
[ "$by_cmake" = "$expected" ] || fail "find_package consumer printed '$by_cmake', expected '$expected'"
[ "$by_pc" = "$expected" ] || fail "pkg-config consumer printed '$by_pc', expected '$expected'"
passed=3
if [ -n "$python" ]; then
    pkg=$prefix/$pydir/kalah
    for f in __init__.py __init__.pyi _kalah.pyi py.typed; do
        [ -f "$pkg/$f" ] || fail "the Python package's $f installed in $pkg"
    done
    # From an empty directory, with only the prefix's package on the path.
    mkdir -p "$work/elsewhere"
    by_py=$(cd "$work/elsewhere" && PYTHONPATH="$prefix/$pydir" "$python" -c '
import sys, kalah
assert kalah.__file__.startswith(sys.argv[1]), kalah.__file__
print(kalah.__version__, "%+d" % kalah.solve(3, 2))' "$pkg") || fail "import kalah from $prefix/$pydir"
    [ "$by_py" = "$expected" ] || fail "the installed Python package printed '$by_py', expected '$expected'"
    passed=4
fi
echo "api-install: installed kalah, find_package(kalah), pkg-config and Python consumers agree: $expected"
echo "$passed passed, 0 failed"
