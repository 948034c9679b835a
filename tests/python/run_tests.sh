#!/usr/bin/env bash
# run_tests.sh - the Python package's tests under CTest (test_python).
#
# usage: run_tests.sh BUILD_DIR SOURCE_DIR HAVE_CUDA [CUDA_ARCHITECTURES]
#
# Makes a venv in BUILD_DIR/tests/venv-python (once) with scikit-build-core,
# numpy and pytest from PyPI, pip-installs SOURCE_DIR/src/python into it
# without build isolation (its CMake build kept in BUILD_DIR/python-build, so
# a second run rebuilds only what changed; SARBP_CUDA=HAVE_CUDA, the CUDA
# back end exactly when this build has one, for CUDA_ARCHITECTURES when
# given) and runs pytest on tests/python.
# SARBP_EXE, SARBP_DATA_DIR and SARBP_GOTCHA_DIR come from CTest's environment.
#
# exit codes: pytest's (0 passed), 1 the package did not build, 77 skipped:
# no venv (Debian: python3-venv) or no PyPI (offline). Never a pass without
# the tests having run.
set -u
build=$1
src=$2
cuda=$3
arch=${4:-}
venv=$build/tests/venv-python
# the distribution's Python where there is one (what scripts/install-deps.sh installs)
py=${SARBP_TEST_PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}

skip() {
    echo "SKIPPED: $*"
    exit 77
}

if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv" >/dev/null 2>&1 ||
        { rm -rf "$venv"; skip "cannot make a venv with '$py -m venv' (Debian: apt-get install python3-venv)"; }
fi
if ! "$venv/bin/python" -c 'import scikit_build_core, numpy, pytest' 2>/dev/null; then
    timeout 600 "$venv/bin/pip" install -q --disable-pip-version-check scikit-build-core numpy pytest ||
        skip "cannot install scikit-build-core, numpy and pytest from PyPI (offline?)"
fi

settings=(--config-settings=build-dir="$build/python-build"
          --config-settings=cmake.define.SARBP_CUDA="$cuda")
[ -n "$arch" ] && settings+=(--config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES="$arch")
start=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
    "$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --no-deps \
    --force-reinstall "${settings[@]}" "$src/src/python" ||
    { echo "FAILED: pip install $src/src/python"; exit 1; }
echo "pip install $src/src/python: $(( $(date +%s) - start )) s"

cd "$build/tests" || exit 1
# nothing written into the source tree (no __pycache__, no .pytest_cache)
PYTHONDONTWRITEBYTECODE=1 exec "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
    "$src/tests/python"
