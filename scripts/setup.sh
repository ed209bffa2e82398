#!/usr/bin/env bash
# Installs the Debian packages kalah needs (only those missing; safe to rerun), builds a
# release into build/ (the CLI ends up at build/kalah) and the endgame database's small
# layers, 6 pits standard 0..20, into kalah-db/ (the directory every command reads by
# default; resumed if present), so that the first `build/kalah solve --pits 6 --seeds 4`
# answers in seconds.
#   --no-db  no database (commands then build small layers in memory as they need them)
#   --test  also what every test needs: Debian's chromium, chromium-driver and
#           python3-selenium (the browser test of `kalah serve`), python3-mypy (ctest
#           api-stubtest: the Python stubs against the module), python3-venv,
#           python3-setuptools and python3-wheel (ctest api-pip: pip install . offline) and
#           Open MPI, with a second build, build-mpi/ (`kalah campaign` with MPI workers,
#           CMake KALAH_MPI), that the tests of build/ run under mpirun (ctest campaign-mpi
#           and campaign-sim).
# Extra CMake arguments may be passed in KALAH_CMAKE_ARGS, e.g. -DKALAH_WERROR=ON.
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
with_db=1
for arg in "$@"; do
    case $arg in
        --test) with_tests=1 ;;
        --no-db) with_db=0 ;;
        *) echo "setup: unknown argument '$arg' (--test, --no-db)" >&2; exit 2 ;;
    esac
done

packages=(g++ cmake make pkg-config libboost-program-options-dev libzstd-dev doctest-dev
          libbenchmark-dev nlohmann-json3-dev libboost-dev python3
          pybind11-dev python3-dev)
if [ $with_tests -eq 1 ]; then
    packages+=(chromium chromium-driver python3-selenium libopenmpi-dev openmpi-bin python3-mypy
               python3-venv python3-setuptools python3-wheel)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

mpi_args=()
if [ $with_tests -eq 1 ]; then
    # The MPI build first: build/'s tests find its kalah through KALAH_MPI_BINARY.
    # shellcheck disable=SC2086
    cmake -S . -B build-mpi -DCMAKE_BUILD_TYPE=Release -DKALAH_MPI=ON -DKALAH_BUILD_BENCH=OFF \
          -DKALAH_API=OFF ${KALAH_CMAKE_ARGS:-} >/dev/null
    cmake --build build-mpi -j"$(nproc)" --target kalah
    mpi_args=(-DKALAH_MPI_BINARY="$PWD/build-mpi/kalah")
fi
# shellcheck disable=SC2086
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${KALAH_CMAKE_ARGS:-} "${mpi_args[@]}" >/dev/null
cmake --build build -j"$(nproc)"
if [ $with_db -eq 1 ]; then
    echo "setup: building the database's small layers (6 pits, standard, 0..20) in kalah-db/" >&2
    build/kalah build-db --pits 6 --max-seeds 20 --db kalah-db --quiet
fi
