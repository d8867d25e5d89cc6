#!/usr/bin/env bash
# Downloads, on a machine with network and Debian's package sources, the OpenMPI runtime and
# headers as Debian packages into .gpu-deps/mpi-debs (ignored by git), for GPU machines that have
# neither network nor MPI: scripts/gpu_mpi_setup.sh unpacks them there. The list is OpenMPI 4.1
# with every library its programs and plug-ins load (ldd closure on Debian 12), less what any
# Linux image has (libc, libstdc++, zlib, libudev, libuuid).
#
#   scripts/gpu_prepare_mpi.sh [--dest DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=$root/.gpu-deps/mpi-debs
case "${1:-}" in
  --dest) dest=${2:?--dest needs a value} ;;
  -h|--help) sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "gpu_prepare_mpi.sh: unknown argument '$1'" >&2; exit 2 ;;
esac
readonly PACKAGES=(openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libhwloc15
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libpsm2-2 libpsm-infinipath1
  libibverbs1 ibverbs-providers librdmacm1 libnl-3-200 libnl-route-3-200 libmunge2 libnuma1
  libatomic1 libltdl7)
rm -rf "$dest"
mkdir -p "$dest"
(cd "$dest" && apt-get download "${PACKAGES[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2)
echo "[gpu_prepare_mpi] $(ls "$dest" | wc -l) packages, $(du -sh "$dest" | cut -f1) in $dest" >&2
