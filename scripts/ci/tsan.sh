#!/bin/sh
# ThreadSanitizer run of the threaded tests (ctest label tsan, tests/suites.cmake: the
# solver and parallel suites, the experiments build's parallel variants, the db suite's
# hostile-file cases): configures a -DKALAH_SANITIZE=thread build in build-tsan, builds
# the tests and runs them, as .ci/run does. What TSan checks and what it cannot:
# results/ci.md.
# Usage: scripts/ci/tsan.sh   (from anywhere; takes a few minutes on 2 cores)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build-tsan"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKALAH_SANITIZE=thread >/dev/null
cmake --build "$build" -j2 --target kalah_tests kalah_experiment_tests kalah
# libgomp is not built with TSan (its fork/barrier ordering is invisible to it), so under
# TSan the solver runs its thread team on std::thread instead of an OpenMP region
# (run_team in solver/solver.cpp); the search, TT locks and flags are the same code.
# halt_on_error: any report fails the run. The TSan build's tests use the smaller
# brute-force and random samples (KALAH_TSAN_QUICK, KALAH_QUERIES; tests/suites.cmake).
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
ctest --test-dir "$build" --output-on-failure -j2 -L tsan
echo "tsan: the threaded tests passed"
