#!/usr/bin/env bash
# ctest api-pip: `pip install .` (pyproject.toml, setup.py) into a scratch venv that sees
# the system's site packages, offline (--no-index, --no-build-isolation: setuptools and
# wheel are Debian's), then `import kalah` from another directory: the version, a value,
# the stubs. The module is built by CMake in BUILD_DIR (KALAH_CMAKE_BUILD_DIR, as setup.py
# allows), where it is already built: this tests the packaging, not a second compile
# (a fresh build's time: results/api.md). Usage:
# pip_test.sh PYTHON SOURCE_DIR BUILD_DIR WORK_DIR VERSION
set -euo pipefail
python=$1
source=$2
build=$3
work=$4
version=$5
rm -rf "$work" "$build/pip-build"  # setuptools keeps what an earlier build put there
mkdir -p "$work/elsewhere"
unset PYTHONPATH  # the venv's kalah, not one a caller points at

fail() { echo "FAIL $*" >&2; exit 1; }

"$python" -m venv --system-site-packages "$work/venv" || fail "python3 -m venv"
KALAH_CMAKE_BUILD_DIR=$build "$work/venv/bin/pip" --disable-pip-version-check install --quiet \
    --no-index --no-cache-dir --no-build-isolation "$source" || fail "pip install . of $source"
out=$(cd "$work/elsewhere" && "$work/venv/bin/python" -c '
import os, sys, kalah
pkg = os.path.dirname(kalah.__file__)
assert pkg.startswith(sys.argv[1]), pkg  # the venv copy, not the source or build tree
for f in ("__init__.pyi", "_kalah.pyi", "py.typed"):
    assert os.path.exists(os.path.join(pkg, f)), f
print(kalah.__version__, kalah.solve(3, 2))' "$work/venv") || fail "import kalah from the venv"
expected="$version $("$build/kalah" solve --pits 3 --seeds 2 --db "$work/none" --json 2>/dev/null | "$python" -c 'import json,sys; print(json.load(sys.stdin)["value"])')"
[ "$out" = "$expected" ] || fail "the venv's kalah printed '$out', expected '$expected'"
shown=$("$work/venv/bin/pip" --disable-pip-version-check show kalah) || fail "pip show kalah"
grep -qx "Version: $version" <<<"$shown" || fail "pip show kalah: not version $version"
echo "api-pip: pip install . offline, then import kalah elsewhere: $out"
echo "1 passed, 0 failed"
