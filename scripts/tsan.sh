#!/bin/sh
# ThreadSanitizer run of the solver and parallel test suites: configures a
# -DKALAH_SANITIZE=thread build in build-tsan, builds the tests and runs both suites.
# Usage: scripts/tsan.sh   (from anywhere; takes a few minutes on 2 cores)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-tsan"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKALAH_SANITIZE=thread >/dev/null
cmake --build "$build" -j2 --target kalah_tests kalah
# libgomp is not built with TSan (its fork/barrier ordering is invisible to it), so under
# TSan the solver runs its thread team on std::thread instead of an OpenMP region
# (run_team in solver/solver.cpp); the search, TT locks and flags are the same code.
# halt_on_error: any report fails the run.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
# Smaller brute-force and random samples (the normal build runs the full ones).
export KALAH_QUERIES=40 KALAH_TSAN_QUICK=1
# From the build directory, as ctest runs them (the CLI tests must not find a kalah-db
# directory in the current directory).
cd "$build"
./kalah_tests --test-suite=solver,parallel --no-version
echo "tsan: solver and parallel suites passed"
