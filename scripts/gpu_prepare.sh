#!/usr/bin/env bash
# Prepares, on a machine with network, what a GPU machine without network needs to build and
# test nearsparse: Kokkos + Kokkos Kernels built for CUDA (sm_90 by default), Catch2's headers and
# Google Benchmark, all in one relocatable folder inside the repository (default .gpu-deps,
# ignored by git), which then travels with the tree. On the GPU machine run scripts/gpu_run.sh.
#
#   scripts/gpu_prepare.sh [--dest DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=$root/.gpu-deps
case "${1:-}" in
  --dest) dest=${2:?--dest needs a value} ;;
  -h|--help) sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "gpu_prepare.sh: unknown argument '$1'" >&2; exit 2 ;;
esac

prefix=$("$root/scripts/setup_dependencies.sh" --backend cuda | tail -n 1)
echo "[gpu_prepare] assembling $dest" >&2
rm -rf "$dest"
mkdir -p "$dest"
cp -a "$prefix/." "$dest/"

# Catch2 (header-only) and Google Benchmark, with their CMake package files, keeping the layout
# their relative import paths expect.
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
mkdir -p "$dest/include" "$dest/lib/cmake" "$dest/lib/$multiarch/cmake"
cp -a /usr/include/catch2 "$dest/include/"
cp -a /usr/lib/cmake/Catch2 "$dest/lib/cmake/"
cp -a /usr/lib/libCatch2WithMain.a "$dest/lib/"  # Catch2Targets.cmake names it
cp -a /usr/include/benchmark "$dest/include/"
cp -a /usr/lib/"$multiarch"/libbenchmark.so* /usr/lib/"$multiarch"/libbenchmark_main.a \
  "$dest/lib/$multiarch/"
cp -a /usr/lib/"$multiarch"/cmake/benchmark "$dest/lib/$multiarch/cmake/"
# Reference LAPACK and BLAS as static archives (with the Fortran runtime they need): the KPM tests
# check densities of states against LAPACK eigenvalues, and the GPU machine has no LAPACK.
# The reference archives, not the OpenBLAS ones Debian's alternatives may name.
for lib in lapack/liblapack.a blas/libblas.a; do
  src=/usr/lib/"$multiarch"/$lib
  [[ -f $src ]] || src=/usr/lib/"$multiarch"/$(basename "$lib")
  cp -L "$src" "$dest/lib/"
done
cp -L "$(gcc -print-file-name=libgfortran.a)" "$(gcc -print-file-name=libquadmath.a)" "$dest/lib/"
# OpenBLAS, Debian's OpenMP build (the host specializations' BLAS and LAPACK and the host dense
# baseline), with its headers and the Fortran runtime it needs, compressed: the shared library
# alone is larger than what may travel uncompressed. scripts/gpu_run.sh unpacks it into the
# dependency folder.
openblas_lib=/usr/lib/"$multiarch"/openblas-openmp/libopenblas.so.0
openblas_inc=/usr/include/"$multiarch"/openblas-openmp
if [[ -f $openblas_lib && -f $openblas_inc/cblas.h ]]; then
  stage=$(mktemp -d)
  mkdir -p "$stage/lib" "$stage/include/openblas-openmp"
  cp -L "$openblas_lib" "$stage/lib/libopenblas.so.0"
  ln -s libopenblas.so.0 "$stage/lib/libopenblas.so"
  cp -L /usr/lib/"$multiarch"/libgfortran.so.5 /usr/lib/"$multiarch"/libquadmath.so.0 "$stage/lib/"
  cp -L "$openblas_inc"/*.h "$stage/include/openblas-openmp/"
  tar -C "$stage" -cJf "$dest/openblas-openmp.tar.xz" lib include
  rm -rf "$stage"
else
  echo "[gpu_prepare] no OpenMP OpenBLAS (libopenblas-openmp-dev): the GPU build runs without it" >&2
fi
# The GPU machine gets the tree without .git: keep the revision for the benchmark context.
git -C "$root" describe --always --dirty --abbrev=12 >"$dest/REVISION" 2>/dev/null ||
  echo unknown >"$dest/REVISION"
echo "[gpu_prepare] $(du -sh "$dest" | cut -f1) in $dest" >&2
echo "$dest"
