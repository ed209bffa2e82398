#!/usr/bin/env bash
# Installs the Debian packages kalah needs (only those missing; safe to rerun) and
# builds a release into build/ (the CLI ends up at build/kalah).
# Extra CMake arguments may be passed in KALAH_CMAKE_ARGS, e.g. -DKALAH_WERROR=ON.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake make pkg-config libboost-program-options-dev libzstd-dev doctest-dev
          libbenchmark-dev nlohmann-json3-dev libcpp-httplib-dev python3
          pybind11-dev python3-dev)
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

# shellcheck disable=SC2086
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${KALAH_CMAKE_ARGS:-} >/dev/null
cmake --build build -j"$(nproc)"
