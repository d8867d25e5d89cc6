#!/usr/bin/env bash
# On a GPU machine (run as root): uses the machine's own MPI when it has a complete one (mpirun
# and mpi.h); otherwise unpacks the OpenMPI packages that scripts/gpu_prepare_mpi.sh assembled
# and makes the links Debian's installer would (mpirun, mpicxx, libmpi.so). Prints the CMake
# arguments that find the MPI to use. Mixing the two (a partial MPI on the machine and parts of
# the packages) is what to avoid: their PMIx plug-ins do not load into each other.
#
#   scripts/gpu_mpi_setup.sh [--debs DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
debs=$root/.gpu-deps/mpi-debs
case "${1:-}" in
  --debs) debs=${2:?--debs needs a value} ;;
  -h|--help) sed -n '2,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "gpu_mpi_setup.sh: unknown argument '$1'" >&2; exit 2 ;;
esac
ls "$debs"/*.deb >/dev/null 2>&1 ||
  { echo "gpu_mpi_setup.sh: no packages in $debs; run scripts/gpu_prepare_mpi.sh first" >&2; exit 1; }
multiarch=x86_64-linux-gnu
own_header=$(ls /usr/lib/$multiarch/openmpi/include/mpi.h /usr/include/$multiarch/mpi/mpi.h \
  /usr/include/mpi.h 2>/dev/null | head -n 1 || true)
if command -v mpirun >/dev/null && mpirun --version >/dev/null 2>&1 && [[ -n $own_header ]]; then
  echo "[mpi-setup] the machine's own MPI: $(mpirun --version 2>&1 | head -n 1), $own_header" >&2
  echo "-DMPI_CXX_SKIP_MPICXX=ON"
  exit 0
fi
for deb in "$debs"/*.deb; do
  # A package whose shared libraries are all there already is left out: the machine's own
  # copies stay untouched.
  libs=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' | grep -E '\.so(\.[0-9]+)*$' || true)
  have=1
  for f in $libs; do [[ -e $f ]] || have=0; done
  if [[ -n $libs && $have -eq 1 ]]; then
    echo "[mpi-setup] kept the machine's own $(basename "$deb")" >&2
    continue
  fi
  dpkg-deb -x "$deb" /
done
ln -sf mpirun.openmpi /usr/bin/mpirun
ln -sf mpiexec.openmpi /usr/bin/mpiexec
ln -sf mpicxx.openmpi /usr/bin/mpicxx
ln -sf openmpi/lib/libmpi.so /usr/lib/$multiarch/libmpi.so
ldconfig
echo "-DMPI_CXX_SKIP_MPICXX=ON -DMPI_CXX_COMPILER=/usr/bin/mpicxx.openmpi" \
  "-DMPI_CXX_HEADER_DIR=/usr/lib/$multiarch/openmpi/include -DMPI_CXX_LIB_NAMES=mpi" \
  "-DMPI_mpi_LIBRARY=/usr/lib/$multiarch/openmpi/lib/libmpi.so" \
  "-DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.openmpi"
