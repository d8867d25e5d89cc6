#!/usr/bin/env bash
# On a GPU machine (no network needed): builds nearsparse for CUDA with the dependencies that
# scripts/gpu_prepare.sh assembled, runs the whole ctest suite on the GPU, then the benchmarks.
#
#   scripts/gpu_run.sh [--deps DIR] [--out DIR] [--bench-filter REGEX] [--no-bench]
#                      [--tests REGEX] [--mpi] [--sanitize]
#
# Results go to the --out folder (default build/gpu-results): ctest.log, info.txt, and the
# benchmarks as bench.json and bench.txt. --tests limits ctest to the tests matching REGEX.
# --mpi unpacks the OpenMPI of scripts/gpu_prepare_mpi.sh and builds the MPI drivers too (NCCL
# from the CUDA toolkit or Python's nvidia-nccl package when found); one GPU per process.
# --sanitize runs compute-sanitizer after ctest instead of the benchmarks: memcheck on every unit
# test program, racecheck and synccheck on their CUDA instances (Catch2 filter '[Cuda]'); prints
# a table (tool, program, errors, seconds) and writes it to sanitize.csv, each run's output to
# sanitize-<tool>-<program>.log. It fails when any run reports an error.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps=$root/.gpu-deps
out=$root/build/gpu-results
filter=.
bench=1
tests=.
mpi=0
sanitize=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --deps) deps=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --bench-filter) filter=${2:?}; shift 2 ;;
    --no-bench) bench=0; shift ;;
    --tests) tests=${2:?}; shift 2 ;;
    --mpi) mpi=1; shift ;;
    --sanitize) sanitize=1; bench=0; shift ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$deps/bin/nvcc_wrapper" ]] ||
  { echo "gpu_run.sh: no CUDA Kokkos in $deps; run scripts/gpu_prepare.sh first" >&2; exit 1; }
mkdir -p "$out"
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}

# OpenBLAS as scripts/gpu_prepare.sh packed it: into the dependency folder, which CMake searches.
if [[ -f $deps/openblas-openmp.tar.xz && ! -e $deps/lib/libopenblas.so.0 ]]; then
  tar -C "$deps" -xJf "$deps/openblas-openmp.tar.xz"
fi
export LD_LIBRARY_PATH=$deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# OpenBLAS 0.3.21 does not know processors newer than it (it falls back to its generic Prescott
# kernels, several times slower): on an AVX-512 processor name the Skylake-X kernels.
if [[ -z ${OPENBLAS_CORETYPE:-} ]] && grep -qw avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi

revision=$(cat "$deps/REVISION" 2>/dev/null || echo unknown)
extra=("-DNEARSPARSE_GIT_REVISION=$revision")
if [[ $mpi -eq 1 ]]; then
  read -r -a mpi_args <<<"$("$root/scripts/gpu_mpi_setup.sh" --debs "$deps/mpi-debs")"
  extra+=(-DNEARSPARSE_ENABLE_MPI=ON "${mpi_args[@]}")
  nccl=$(python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' \
    2>/dev/null || true)
  [[ -n $nccl ]] && extra+=("-DNCCL_ROOT=$nccl")
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export KOKKOS_NUM_DEVICES=$(nvidia-smi -L | wc -l)  # one GPU per process, by local rank
  export NCCL_NVLS_ENABLE=0                            # never NVLink multicast
fi
build=$(NEARSPARSE_KOKKOS_PREFIX=$deps "$root/scripts/build.sh" --backend cuda \
  --build-dir "$root/build/cuda-gpu" --tests --perf -- "${extra[@]}" | tail -n 1)

"$build/apps/nearsparse/nearsparse" info | tee "$out/info.txt"
status=0
(cd "$build" && OMP_PROC_BIND=false ctest --output-on-failure -R "$tests" 2>&1) | tee "$out/ctest.log" ||
  status=1
if [[ $sanitize -eq 1 ]]; then
  "$root/scripts/gpu_sanitize.sh" --build "$build" --out "$out" || status=1
fi
if [[ $bench -eq 1 ]]; then
  "$build/perf/nearsparse_bench" --benchmark_filter="$filter" --benchmark_out="$out/bench.json" \
    --benchmark_out_format=json 2>&1 | tee "$out/bench.txt" || status=1
fi
exit $status
