#!/usr/bin/env bash
# Sets up everything on a fresh machine, builds the nearsparse program (OpenMP backend) and runs
# it on its built-in defaults. Extra arguments go to the program: `scripts/run_default.sh info`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$("$root/scripts/build.sh" --backend openmp --build-dir "$root/build/openmp-app" | tail -n 1)
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
exec "$build_dir/apps/nearsparse/nearsparse" "$@"
