#!/usr/bin/env bash
# Fetches the wheels the GPU check carries to a lent GPU machine (no network there) into
# tools/gpu_check/wheels/ (git-ignored; name it in the device run's `carry`). The machine's image has
# Python 3.12, torch, JAX, CuPy, nanobind, pybind11, CMake, ninja and scikit-build-core; it lacks
# apache-tvm-ffi (the kernel-interop row and the tvm-ffi peer) and pyelftools (packedfun's runtime
# dependency). nanobind is carried too so that its peer row is built with a known version.
#
#   tools/gpu_check/pack.sh           fetch (needs a package index: PyPI or a local mirror)
#   tools/gpu_check/pack.sh --check   only check that every wheel is there and fits (no network)
#
# The versions are pinned here; the check's summary prints the versions it ran with.
set -euo pipefail
cd "$(dirname "$0")"
WHEELS=wheels
PINS=(apache-tvm-ffi==0.1.15.post2 pyelftools==0.33 nanobind==3.1.0)
LIMIT_BYTES=$((16 * 1024 * 1024)) # of the 64 MiB a device call may carry, working tree included

check() {
  local missing=0 name
  for pin in "${PINS[@]}"; do
    name=${pin%%==*}
    name=${name//-/_}
    if ! compgen -G "$WHEELS/${name}-${pin##*==}-*.whl" >/dev/null; then
      echo "not packed: $pin (run tools/gpu_check/pack.sh)"
      missing=1
    fi
  done
  [ "$missing" = 0 ] || return 1
  local size
  size=$(du -cb "$WHEELS"/*.whl | tail -1 | cut -f1)
  if [ "$size" -gt "$LIMIT_BYTES" ]; then
    echo "packed wheels take $size bytes, over the $LIMIT_BYTES budgeted" >&2
    return 1
  fi
  echo "packed: $(cd "$WHEELS" && ls ./*.whl | tr '\n' ' ')($size bytes)"
}

if [ "${1:-}" = "--check" ]; then
  check
  exit $?
fi

PYTHON=${PYTHON:-python3}
rm -rf "$WHEELS"
mkdir -p "$WHEELS"
# Binary wheels for CPython 3.12 on x86-64 Linux whatever this machine runs; pip matches each
# manylinux tag exactly, so the usual ones are all named.
"$PYTHON" -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any \
  -d "$WHEELS" "${PINS[@]}"
check
