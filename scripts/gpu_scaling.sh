#!/usr/bin/env bash
# On a machine with several GPUs, after `scripts/gpu_run.sh --mpi` built build/cuda-gpu: strong
# scaling of distributed dense SpAMM (1, 2, ... processes, one per GPU), strong and weak scaling
# of block-sparse SpAMM (nearsparse_bench_block_sparse_mpi: C = A A, the overlap chain and
# lattice) and of distributed KPM. Writes spamm_scaling.csv, block_sparse_scaling.csv and
# kpm_scaling.txt to the --out folder, and summary tables (spamm_scaling.txt,
# block_sparse_scaling.txt). The CSV files are appended to.
#
#   scripts/gpu_scaling.sh [--out DIR] [--procs "1 2 4"] [--repeats R]
#       dense:        [--sizes "16384 32768"] [--precisions "fp32 fp16"] [--ratios 0.1,0.05]
#                     [--bench-args "--balance ..."] [--no-dense]
#       block-sparse: [--bs-sizes "1048576 2097152"] [--bs-weak "524288"]
#                     [--bs-lattice "262144"] [--bs-lattice-weak "262144"]
#                     [--bs-precisions "fp64 fp32"] [--bs-args "--tile 64 ..."] [--no-block-sparse]
#       KPM:          [--no-kpm]
#   Block-sparse: --bs-sizes are chain N for strong scaling (the same N on every --procs),
#   --bs-weak chain N per process (N = that x P), --bs-lattice and --bs-lattice-weak lattice
#   sites 64 x 64 x (N / 4096) (multiples of 4096; weak: per process); "" skips a list.
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
dense=1
kpm=1
block_sparse=1
bs_sizes="1048576 2097152"
bs_weak="524288"
bs_lattice="262144"
bs_lattice_weak="262144"
bs_precisions="fp64 fp32"
bs_args=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out=${2:?}; shift 2 ;;
    --sizes) sizes=${2:?}; shift 2 ;;
    --precisions) precisions=${2:?}; shift 2 ;;
    --ratios) ratios=${2:?}; shift 2 ;;
    --procs) procs=${2:?}; shift 2 ;;
    --repeats) repeats=${2:?}; shift 2 ;;
    --no-kpm) kpm=0; shift ;;
    --no-dense) dense=0; shift ;;
    --bench-args) bench_args=${2:?}; shift 2 ;;
    --no-block-sparse) block_sparse=0; shift ;;
    --bs-sizes) bs_sizes=${2?}; shift 2 ;;
    --bs-weak) bs_weak=${2?}; shift 2 ;;
    --bs-lattice) bs_lattice=${2?}; shift 2 ;;
    --bs-lattice-weak) bs_lattice_weak=${2?}; shift 2 ;;
    --bs-precisions) bs_precisions=${2:?}; shift 2 ;;
    --bs-args) bs_args=${2:?}; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' \
      "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "gpu_scaling.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
export KOKKOS_NUM_DEVICES=$(nvidia-smi -L | wc -l)
csv=$out/spamm_scaling.csv
if [[ $dense -eq 1 ]]; then
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
fi
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
if [[ $dense -eq 1 ]]; then
  {
    summary 10 "reused product (plan kept, no new operands)"
    summary 18 "whole call (update_a, update_b, product)"
  } | tee "$out/spamm_scaling.txt"
fi
if [[ $block_sparse -eq 1 ]]; then
  bscsv=$out/block_sparse_scaling.csv
  # One run of the block-sparse benchmark on np processes; the rest of the arguments are its own
  # ($bs_args split into words on purpose, as $bench_args above).
  bs_run() {
    local np=$1
    shift
    local threads=$(($(nproc) / np))
    OMP_NUM_THREADS=$((threads > 0 ? threads : 1)) mpirun -np "$np" --bind-to none \
      "$build/perf/nearsparse_bench_block_sparse_mpi" "$@" --repeats "$repeats" $bs_args \
      --csv "$bscsv" ||
      echo "gpu_scaling.sh: block-sparse, $np process(es), $*: FAILED (see above)"
  }
  for p in $bs_precisions; do
    for n in $bs_sizes; do
      for np in $procs; do bs_run "$np" --case chain --n "$n" --precision "$p"; done
    done
    for n in $bs_weak; do
      for np in $procs; do bs_run "$np" --case chain --n "$n" --weak --precision "$p"; done
    done
    for n in $bs_lattice; do
      for np in $procs; do bs_run "$np" --case lattice --n "$n" --precision "$p"; done
    done
    for n in $bs_lattice_weak; do
      for np in $procs; do bs_run "$np" --case lattice --n "$n" --weak --precision "$p"; done
    done
  done
  # Per case: the whole call's median (slowest process) on each P; strong scaling: speedup over
  # P = 1 (tP / t1 inverted), weak scaling: efficiency t1 / tP (1 is perfect); the single-process
  # multiply measured in the one-process run, the largest bytes a process received at the
  # largest P, and whether every run's check passed or was skipped (ok).
  if [[ -s $bscsv ]]; then
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
      { weak = $c["weak"] == 1; p = $c["procs"] + 0;
        n = weak ? $c["n"] / p : $c["n"];
        key = sprintf("%-6s %-7s %10d %-4s %4d", weak ? "weak" : "strong", $c["case"], n,
                      $c["precision"], $c["tile"]);
        if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
        if (!(p in pseen)) { pseen[p] = 1; ps[++np] = p }
        t[key, p] = $c["whole_ms"]; recv[key, p] = $c["recv_max_MB"];
        if (p == 1) single[key] = $c["single_ms"];
        bad[key] += $c["ok"] != 1 }
      END {
        for (i = 2; i <= np; i++) for (j = i; j > 1 && ps[j - 1] > ps[j]; j--) {
          x = ps[j]; ps[j] = ps[j - 1]; ps[j - 1] = x }
        print "block-sparse C = A A, whole call (median, slowest process), ms; N per process for weak";
        printf "%-6s %-7s %10s %-4s %4s", "mode", "case", "N", "prec", "tile";
        for (i = 1; i <= np; i++) printf " %9s", "P=" ps[i];
        printf " %9s", "single";
        for (i = 1; i <= np; i++) if (ps[i] > 1) printf " %7s", "x" ps[i];
        printf " %9s %4s\n", "recv_MB", "ok";
        for (k = 1; k <= nk; k++) {
          key = keys[k]; printf "%s", key;
          for (i = 1; i <= np; i++)
            if ((key, ps[i]) in t) printf " %9.2f", t[key, ps[i]]; else printf " %9s", "-";
          printf " %9s", (key in single) ? sprintf("%.2f", single[key]) : "-";
          for (i = 1; i <= np; i++) if (ps[i] > 1) {
            if ((key, 1) in t && (key, ps[i]) in t && t[key, ps[i]] > 0)
              printf " %7.2f", t[key, 1] / t[key, ps[i]];
            else printf " %7s", "-" }
          last = "-";
          for (i = np; i >= 1; i--) if ((key, ps[i]) in recv) { last = recv[key, ps[i]]; break }
          printf " %9s %4s\n", last, bad[key] ? "NO" : "yes" } }' "$bscsv" |
      tee "$out/block_sparse_scaling.txt"
    echo "(x P: strong scaling, the speedup t1 / tP; weak scaling, the efficiency t1 / tP)" |
      tee -a "$out/block_sparse_scaling.txt"
  fi
fi
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
