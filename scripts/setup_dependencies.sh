#!/usr/bin/env bash
# Installs and builds everything nearsparse needs, from the package registries only.
#
#   scripts/setup_dependencies.sh [--backend openmp|cuda] [--cache DIR] [--jobs N] [--no-apt]
#
# 1. Debian packages (catch2, Benchmark, OpenMPI, LAPACKE, OpenBLAS, numpy, matplotlib, zlib) if missing.
# 2. Kokkos 3.4.01 and Kokkos Kernels 3.4.01 from Debian's `trilinos` 13.2.0 source package,
#    with the patches in scripts/patches/ applied (CUDA 13 and Hopper support).
# 3. Builds and installs both into the cache, one prefix per backend:
#      openmp: Serial + OpenMP
#      cuda:   CUDA (sm_90, or NEARSPARSE_CUDA_ARCH) + OpenMP + Serial
#
# The cache (default ${XDG_CACHE_HOME:-$HOME/.cache}/nearsparse, or NEARSPARSE_DEPS_DIR) lives
# outside any build tree. Every step leaves a stamp that records its inputs, so a second run with
# the same inputs does nothing and prints the prefix. The last line printed is the install prefix.
set -euo pipefail

readonly TRILINOS_VERSION="13.2.0-4"
readonly TRILINOS_TARBALL="trilinos_13.2.0.orig.tar.gz"
readonly KOKKOS_VERSION="3.4.01"
readonly DEBIAN_PACKAGES=(catch2 libbenchmark-dev libopenmpi-dev openmpi-bin liblapacke-dev
  libopenblas-openmp-dev python3-numpy python3-matplotlib ninja-build patch zlib1g-dev)

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
backend=openmp
cache=${NEARSPARSE_DEPS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nearsparse}
jobs=$(nproc 2>/dev/null || echo 2)
use_apt=1
cuda_arch=${NEARSPARSE_CUDA_ARCH:-HOPPER90}

usage() {
  sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --backend) backend=${2:?--backend needs a value}; shift 2 ;;
    --cache) cache=${2:?--cache needs a value}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a value}; shift 2 ;;
    --no-apt) use_apt=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "setup_dependencies: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

case "$backend" in
  openmp|cuda) ;;
  *) echo "setup_dependencies: --backend must be 'openmp' or 'cuda', got '$backend'" >&2; exit 2 ;;
esac

step() { printf '[setup %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

# A stamp holds the text of a step's inputs; the step is redone when that text changes.
stamp_matches() { [[ -f "$1" ]] && [[ "$(cat "$1")" == "$2" ]]; }

# --- 1. Debian packages ----------------------------------------------------------------------
install_debian_packages() {
  local missing=()
  for pkg in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$pkg")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    step "Debian packages present"
    return
  fi
  [[ $use_apt -eq 1 ]] || die "missing Debian packages (${missing[*]}) and --no-apt was given"
  local sudo=()
  [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  step "installing Debian packages: ${missing[*]}"
  "${sudo[@]}" apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
}

# --- 2. Sources ------------------------------------------------------------------------------
# The mirror is the one the machine's own apt configuration names for bookworm; the deb-src line
# goes to a private sources list so the system's apt setup stays untouched.
system_mirror() {
  local uri
  uri=$(grep -h -E '^\s*URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -v -- '-security' | head -n 1 | awk '{print $2}')
  if [[ -z "$uri" && -f /etc/apt/sources.list ]]; then
    uri=$(grep -E '^\s*deb\s' /etc/apt/sources.list | grep -v -- '-security' | head -n 1 |
      awk '{for (i = 2; i <= NF; ++i) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}')
  fi
  [[ -n "$uri" ]] || die "no Debian mirror found in /etc/apt/sources.list{,.d}"
  echo "$uri"
}

fetch_trilinos() {
  local dl="$cache/downloads"
  if [[ -f "$dl/$TRILINOS_TARBALL" && -f "$dl/.complete-$TRILINOS_VERSION" ]]; then
    step "trilinos $TRILINOS_VERSION source present in $dl"
    return
  fi
  command -v apt-get >/dev/null || die "apt-get is needed to fetch the trilinos source package"
  local apt="$cache/apt"
  mkdir -p "$apt/lists/partial" "$apt/parts" "$dl"
  local mirror
  mirror=$(system_mirror)
  cat >"$apt/parts/trilinos-src.sources" <<EOF
Types: deb-src
URIs: $mirror
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  local opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt/parts"
    -o "Dir::State::Lists=$apt/lists" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
  step "fetching the source index from $mirror"
  apt-get "${opts[@]}" update -qq || die "apt-get update of the deb-src index ($mirror) failed"
  step "downloading trilinos $TRILINOS_VERSION source (166 MB)"
  # apt-get checks the checksums the signed .dsc lists; a damaged download fails here.
  (cd "$dl" && apt-get "${opts[@]}" source --download-only -qq "trilinos=$TRILINOS_VERSION") ||
    die "download of trilinos=$TRILINOS_VERSION failed (is the mirror reachable?)"
  [[ -f "$dl/$TRILINOS_TARBALL" ]] || die "download finished without $TRILINOS_TARBALL"
  touch "$dl/.complete-$TRILINOS_VERSION"
}

patch_digest() {
  cat "$script_dir"/patches/kokkos-$KOKKOS_VERSION/*.patch | sha256sum | cut -c1-16
}

# Extracts packages/kokkos and packages/kokkos-kernels and applies the patches.
prepare_sources() {
  local src="$cache/src" want
  want="trilinos=$TRILINOS_VERSION patches=$(patch_digest)"
  if stamp_matches "$src/.stamp" "$want"; then
    step "patched Kokkos sources present in $src"
    return
  fi
  rm -rf "$src"
  mkdir -p "$src"
  step "extracting Kokkos and Kokkos Kernels from $TRILINOS_TARBALL"
  tar -xzf "$cache/downloads/$TRILINOS_TARBALL" -C "$src" --strip-components=2 \
    --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*' ||
    die "extracting $TRILINOS_TARBALL failed (remove $cache/downloads to download it again)"
  local found
  found=$(awk '/^tag:/ {v = $2} END {print v}' "$src/kokkos/master_history.txt")
  [[ "$found" == "$KOKKOS_VERSION" ]] || die "expected Kokkos $KOKKOS_VERSION, found '$found'"
  for p in "$script_dir"/patches/kokkos-$KOKKOS_VERSION/*.patch; do
    step "applying $(basename "$p")"
    patch -s -p1 -d "$src/kokkos" --forward <"$p" || die "patch $(basename "$p") did not apply"
  done
  echo "$want" >"$src/.stamp"
}

# --- 3. Builds -------------------------------------------------------------------------------
build_one() { # name source_dir install_prefix cmake_args...
  local name=$1 srcdir=$2 prefix=$3
  shift 3
  local build="$cache/build/$backend/$name"
  rm -rf "$build"
  mkdir -p "$build"
  step "configuring $name ($backend)"
  cmake -S "$srcdir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_STANDARD=17 "$@" >"$build/configure.log" 2>&1 ||
    die "configuring $name failed; see $build/configure.log"
  step "building $name with $jobs jobs (several minutes; log in $build/build.log)"
  cmake --build "$build" --parallel "$jobs" >"$build/build.log" 2>&1 ||
    die "building $name failed; see $build/build.log"
  cmake --install "$build" >"$build/install.log" 2>&1 || die "installing $name failed"
  rm -rf "$build"
}

build_kokkos() {
  local prefix=$1 src="$cache/src" want
  local args=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_TESTS=OFF)
  if [[ $backend == cuda ]]; then
    command -v nvcc >/dev/null || die "--backend cuda needs nvcc on the PATH"
    args+=(-DCMAKE_CXX_COMPILER="$src/kokkos/bin/nvcc_wrapper" -DKokkos_ENABLE_CUDA=ON
      -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_${cuda_arch}=ON)
  fi
  want="kokkos=$KOKKOS_VERSION $(cat "$src/.stamp") ${args[*]}"
  if stamp_matches "$prefix/.kokkos-stamp" "$want"; then
    step "Kokkos ($backend) installed in $prefix"
  else
    rm -rf "$prefix"
    build_one kokkos "$src/kokkos" "$prefix" "${args[@]}"
    echo "$want" >"$prefix/.kokkos-stamp"
  fi

  # Kokkos Kernels: no default explicit instantiations (the library instantiates what it uses)
  # and no vendor TPLs (nearsparse calls cuBLAS/cuSPARSE itself where it compares against them).
  local kk_args=(-DKokkos_ROOT="$prefix" -DKokkosKernels_ADD_DEFAULT_ETI=OFF
    -DKokkosKernels_ENABLE_TPL_CUBLAS=OFF -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF
    -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF)
  [[ $backend == cuda ]] && kk_args+=(-DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper")
  want="kokkos-kernels=$KOKKOS_VERSION $(cat "$prefix/.kokkos-stamp") ${kk_args[*]}"
  if stamp_matches "$prefix/.kokkoskernels-stamp" "$want"; then
    step "Kokkos Kernels ($backend) installed in $prefix"
  else
    build_one kokkos-kernels "$src/kokkos-kernels" "$prefix" "${kk_args[@]}"
    echo "$want" >"$prefix/.kokkoskernels-stamp"
  fi
}

step "backend: $backend, cache: $cache"
install_debian_packages
command -v cmake >/dev/null || die "cmake is needed (3.16 or newer)"
fetch_trilinos
prepare_sources
prefix="$cache/install/$backend"
build_kokkos "$prefix"
step "done: Kokkos and Kokkos Kernels for '$backend' are in $prefix"
echo "$prefix"
