#!/usr/bin/env bash
# On a machine with several GPUs, after `scripts/gpu_run.sh --mpi` built build/cuda-gpu: strong
# scaling of distributed SpAMM (1, 2, ... processes, one per GPU) and strong and weak scaling of
# distributed KPM. Writes spamm_scaling.csv and kpm_scaling.txt to the --out folder and prints
# a summary table.
#
#   scripts/gpu_scaling.sh [--out DIR] [--sizes "16384 32768"] [--precisions "fp32 fp16"]
#                          [--ratios 0.1,0.05] [--procs "1 2 4"] [--repeats R] [--no-kpm]
#                          [--bench-args "--balance ..."]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/cuda-gpu
out=$root/build/gpu-results
sizes="16384 32768"
precisions="fp32 fp16"
ratios=0.1,0.05
procs="1 2 4"
repeats=10
bench_args=""
kpm=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out=${2:?}; shift 2 ;;
    --sizes) sizes=${2:?}; shift 2 ;;
    --precisions) precisions=${2:?}; shift 2 ;;
    --ratios) ratios=${2:?}; shift 2 ;;
    --procs) procs=${2:?}; shift 2 ;;
    --repeats) repeats=${2:?}; shift 2 ;;
    --no-kpm) kpm=0; shift ;;
    --bench-args) bench_args=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_scaling.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
export KOKKOS_NUM_DEVICES=$(nvidia-smi -L | wc -l)
csv=$out/spamm_scaling.csv
for n in $sizes; do
  for p in $precisions; do
    for np in $procs; do
      single=--no-single
      [[ $np -eq 1 ]] && single=""
      OMP_NUM_THREADS=$(($(nproc) / np)) mpirun -np "$np" --bind-to none \
        "$build/perf/nearsparse_bench_spamm_mpi" --n "$n" \
        --precision "$p" --ratios "$ratios" --repeats "$repeats" $single $bench_args --csv "$csv" ||
        echo "gpu_scaling.sh: $np process(es), n = $n, $p: a check FAILED (see above)"
    done
  done
done
# Speedup of P processes over one (its own single-process distributed run), and over the
# single-GPU plan and cuBLAS measured in the one-process run: for the reused product (column 10)
# and for the whole call of an iteration, A and B refreshed then multiplied (column 18).
summary() {
  awk -F, -v col="$1" -v title="$2" 'NR > 1 { key = $4 "," $5 "," sprintf("%.2f", $6);
           t[key "," $1] = $col;
           if ($1 == 1) { one[key] = $col; single[key] = $11; dense[key] = $12 } keys[key] = 1;
           ps[$1] = 1 }
     END { print title; printf "%-24s", "n,precision,ratio"; for (p in ps) printf " %9s", "P=" p " ms";
           printf " %9s %9s", "single", "cuBLAS";
           for (p in ps) if (p > 1) printf " %8s", "x" p; printf "\n";
           for (k in keys) { printf "%-24s", k; for (p in ps) printf " %9.2f", t[k "," p];
             printf " %9.2f %9.2f", single[k], dense[k];
             for (p in ps) if (p > 1) printf " %8.2f", one[k] / t[k "," p]; printf "\n" } }' "$csv"
}
{
  summary 10 "reused product (plan kept, no new operands)"
  summary 18 "whole call (update_a, update_b, product)"
} | tee "$out/spamm_scaling.txt"
if [[ $kpm -eq 1 ]]; then
  {
    echo "KPM strong scaling: 100 x 100 x 40 insulator, 32 vectors, 200 moments"
    for np in $procs; do
      OMP_NUM_THREADS=$(($(nproc) / np)) mpirun -np "$np" --bind-to none \
        "$build/apps/kpm_mpi/nearsparse-kpm-mpi" --nx 100 --ny 100 --nz 40 --moments 200 --vectors 32 --csv "" | grep -E "processes|per step"
    done
    echo "KPM weak scaling: 100 x 100 x (20 P) insulator, 32 vectors, 200 moments"
    for np in $procs; do
      OMP_NUM_THREADS=$(($(nproc) / np)) mpirun -np "$np" --bind-to none \
        "$build/apps/kpm_mpi/nearsparse-kpm-mpi" --nx 100 --ny 100 --nz $((20 * np)) --moments 200 --vectors 32 --csv "" | grep -E "processes|per step"
    done
  } 2>&1 | tee "$out/kpm_scaling.txt"
fi
