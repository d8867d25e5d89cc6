#!/usr/bin/env bash
# compute-sanitizer over the unit test programs of a CUDA build (scripts/gpu_run.sh --sanitize
# calls it after its build; it runs on its own on any CUDA build directory):
#   memcheck               every unit test program, all its test cases
#   racecheck, synccheck   every unit test program, only its CUDA instances (Catch2 '[Cuda]')
# Prints a table (tool, program, errors, warnings, seconds, exit status), writes it as CSV to
# <out>/sanitize.csv and each run's output to <out>/sanitize-<tool>-<program>.log. Exits 1 when
# any run reports an error or fails. Racecheck's warnings (hazards it cannot confirm) are counted
# apart: with Kokkos 3.4 they come from its RangePolicy reductions on CUDA, which exchange values
# between the lanes of a warp through shared memory with a __syncwarp after each step (see
# perf/RESULTS.md, "Reliability"); our own kernels have none.
#
#   scripts/gpu_sanitize.sh --build DIR [--out DIR] [--tools "memcheck racecheck synccheck"]
#                           [--programs REGEX]
set -euo pipefail
build=
out=
tools="memcheck racecheck synccheck"
programs=.
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --tools) tools=${2:?}; shift 2 ;;
    --programs) programs=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_sanitize.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -d $build ]] || { echo "gpu_sanitize.sh: --build DIR is required" >&2; exit 2; }
out=${out:-$build/sanitize}
mkdir -p "$out"

sanitizer=$(command -v compute-sanitizer || true)
if [[ -z $sanitizer ]]; then
  for dir in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    [[ -n $dir && -x $dir/bin/compute-sanitizer ]] && { sanitizer=$dir/bin/compute-sanitizer; break; }
  done
fi
if [[ -z $sanitizer ]] && command -v nvcc >/dev/null; then
  candidate=$(dirname "$(command -v nvcc)")/compute-sanitizer
  [[ -x $candidate ]] && sanitizer=$candidate
fi
[[ -n $sanitizer ]] || { echo "gpu_sanitize.sh: compute-sanitizer not found" >&2; exit 1; }

# The single-process unit test programs (the MPI ones run under mpiexec and are left out).
mapfile -t tests < <(find "$build/unit_tests" -maxdepth 2 -type f -perm -u+x \
  -name 'nearsparse_test_*' ! -name '*_mpi' | sort | grep -E -- "$programs" || true)
[[ ${#tests[@]} -gt 0 ]] || { echo "gpu_sanitize.sh: no test programs in $build/unit_tests" >&2; exit 1; }

export OMP_PROC_BIND=false
csv=$out/sanitize.csv
echo "tool,program,errors,warnings,seconds,exit_status" >"$csv"
status=0
for tool in $tools; do
  for test in "${tests[@]}"; do
    program=$(basename "$test")
    log=$out/sanitize-$tool-$program.log
    # racecheck and synccheck look at shared memory and barriers of CUDA kernels: only the CUDA
    # instances of the test cases (the host ones launch no kernel and take long under them).
    filter=()
    [[ $tool != memcheck ]] && filter=('[Cuda]')
    extra=()
    [[ $tool == memcheck ]] && extra=(--leak-check full)
    start=$(date +%s.%N)
    rc=0
    "$sanitizer" --tool "$tool" "${extra[@]}" --print-limit 100 "$test" "${filter[@]}" \
      >"$log" 2>&1 || rc=$?
    seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    # memcheck and synccheck: "ERROR SUMMARY: N errors"; racecheck: "RACECHECK SUMMARY: N
    # hazards displayed (E errors, W warnings)".
    errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+' "$log" | tail -n 1 | grep -Eo '[0-9]+$' || true)
    errors=${errors:-0}
    warnings=0
    race=$(grep -Eo 'RACECHECK SUMMARY: .*' "$log" | tail -n 1 || true)
    if [[ -n $race ]]; then
      # Both summaries may appear: keep the larger error count.
      race_errors=$(grep -Eo '[0-9]+ errors?' <<<"$race" | grep -Eo '^[0-9]+' || echo 0)
      [[ $race_errors -gt $errors ]] && errors=$race_errors
      warnings=$(grep -Eo '[0-9]+ warnings?' <<<"$race" | grep -Eo '^[0-9]+' || echo 0)
    fi
    grep -q 'SUMMARY' "$log" || errors=unknown
    echo "$tool,$program,$errors,$warnings,$seconds,$rc" >>"$csv"
    if [[ $errors != 0 || $rc -ne 0 ]]; then status=1; fi
  done
done

echo
version=$("$sanitizer" --version 2>/dev/null | grep -Eo '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1 || true)
echo "compute-sanitizer ${version:-(version unknown)}:"
column -s, -t "$csv" 2>/dev/null || tr ',' '\t' <"$csv"
echo "table: $csv"
exit $status
