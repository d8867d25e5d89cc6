#!/usr/bin/env bash
# Sets up everything on a fresh machine, builds nearsparse with its tests, benchmarks and program
# (OpenMP backend) and runs the whole ctest suite: unit tests on every enabled execution space
# (the OpenMP ones also on 1 and 2 threads), the program's tests and the benchmark smoke test.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$("$root/scripts/build.sh" --backend openmp --build-dir "$root/build/openmp" --tests --perf |
  tail -n 1)
cd "$build_dir"
ctest --output-on-failure "$@"
