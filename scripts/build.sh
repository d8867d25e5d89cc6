#!/usr/bin/env bash
# Configures and builds nearsparse against the Kokkos that setup_dependencies.sh built (or the one
# in NEARSPARSE_KOKKOS_PREFIX, or any you pass with -DCMAKE_PREFIX_PATH after --).
#
#   scripts/build.sh [--backend openmp|cuda] [--build-dir DIR] [--tests] [--perf] [--no-apps]
#                    [--jobs N] [-- extra cmake arguments]
#
# The build directory defaults to build/<backend>. Prints the build directory last.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
backend=openmp
build_dir=
tests=OFF
perf=OFF
apps=ON
jobs=$(nproc 2>/dev/null || echo 2)
extra=()

while [[ $# -gt 0 ]]; do
  case "$1" in
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    --build-dir) build_dir=${2:?--build-dir needs a value}; shift 2 ;;
    --tests) tests=ON; shift ;;
    --perf) perf=ON; shift ;;
    --no-apps) apps=OFF; shift ;;
    --jobs) jobs=${2:?--jobs needs a value}; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
build_dir=${build_dir:-$root/build/$backend}

if [[ -n "${NEARSPARSE_KOKKOS_PREFIX:-}" ]]; then
  prefix=$NEARSPARSE_KOKKOS_PREFIX
else
  prefix=$("$root/scripts/setup_dependencies.sh" --backend "$backend" | tail -n 1)
fi

args=(-G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$prefix"
  -DNEARSPARSE_ENABLE_TESTS=$tests -DNEARSPARSE_ENABLE_PERF=$perf -DNEARSPARSE_ENABLE_APPS=$apps)
if [[ $backend == cuda ]]; then
  args+=("-DCMAKE_CXX_COMPILER=$prefix/bin/nvcc_wrapper")
fi

echo "[build] configuring $build_dir ($backend, tests $tests, perf $perf, apps $apps)" >&2
cmake -S "$root" -B "$build_dir" "${args[@]}" "${extra[@]}" >&2
echo "[build] building with $jobs jobs" >&2
cmake --build "$build_dir" --parallel "$jobs" >&2
echo "$build_dir"
