# Finds what the library links against. Any Kokkos 3.4 or newer works (4.x and 5.x included);
# nothing here depends on scripts/setup_dependencies.sh, which only builds one for machines that
# have none. Point CMake at an installation with Kokkos_ROOT / KokkosKernels_ROOT or
# CMAKE_PREFIX_PATH.

# Kokkos 3.x exports CUDA::cudart and CUDA::cuda_driver with the absolute paths of the machine it
# was built on, unless those targets exist already: finding the CUDA toolkit first (when there is
# one) makes the same Kokkos installation usable where CUDA lives elsewhere.
find_package(CUDAToolkit QUIET)

# No version in the call: Kokkos' version file asks for the same major version, which would turn
# away a newer Kokkos that the library supports.
find_package(Kokkos REQUIRED)
if(Kokkos_VERSION VERSION_LESS 3.4)
  message(FATAL_ERROR "nearsparse needs Kokkos 3.4 or newer; found ${Kokkos_VERSION} in ${Kokkos_DIR}")
endif()
find_package(KokkosKernels REQUIRED)

kokkos_check(DEVICES CUDA RETURN_VALUE NEARSPARSE_HAVE_CUDA)
kokkos_check(DEVICES OPENMP RETURN_VALUE NEARSPARSE_HAVE_OPENMP)
kokkos_check(DEVICES SERIAL RETURN_VALUE NEARSPARSE_HAVE_SERIAL)

if(NEARSPARSE_HAVE_CUDA AND NOT CUDAToolkit_FOUND)
  # cuBLAS and cuSPARSE: vendor fast paths and the baselines benchmarks compare against.
  message(FATAL_ERROR "Kokkos has the CUDA backend, but no CUDA toolkit was found "
                      "(set CUDAToolkit_ROOT)")
endif()

if(NEARSPARSE_ENABLE_MPI)
  find_package(MPI REQUIRED COMPONENTS CXX)
endif()

# NCCL moves GPU buffers between the processes of the MPI drivers device to device; without it
# they go through host memory. The CUDA toolkit may ship it; NCCL_ROOT points elsewhere.
set(NEARSPARSE_HAVE_NCCL OFF)
if(NEARSPARSE_ENABLE_MPI AND NEARSPARSE_HAVE_CUDA AND NEARSPARSE_ENABLE_NCCL)
  find_path(NEARSPARSE_NCCL_INCLUDE_DIR nccl.h
            HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
            PATH_SUFFIXES include)
  find_library(NEARSPARSE_NCCL_LIBRARY NAMES nccl libnccl.so.2
               HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
                     ${CUDAToolkit_LIBRARY_ROOT}
               PATH_SUFFIXES lib lib64)
  if(NEARSPARSE_NCCL_INCLUDE_DIR AND NEARSPARSE_NCCL_LIBRARY)
    set(NEARSPARSE_HAVE_NCCL ON)
    message(STATUS "nearsparse: NCCL ${NEARSPARSE_NCCL_LIBRARY}")
  else()
    message(STATUS "nearsparse: no NCCL found; GPU buffers between processes go through the host")
  endif()
endif()

# OpenBLAS: the host specializations' BLAS and LAPACK (SpAMM's kept tile products, TLR's
# compression) and the dense baseline of the programs and benchmarks on host backends. Optional:
# without it the host specializations decline and the portable kernels run, and the programs
# compare against Kokkos Kernels gemm, saying so. OpenBLAS's cblas.h sits next to
# openblas_config.h, which only OpenBLAS ships (a plain cblas.h may be another BLAS's, so its
# declarations are checked); Debian puts them in <triplet>/openblas-openmp/ (the variant that runs
# on the OpenMP runtime the OpenMP backend uses) or openblas-pthread/.
set(NEARSPARSE_HAVE_OPENBLAS OFF)
if(NEARSPARSE_ENABLE_OPENBLAS)
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS QUIET)
  unset(BLA_VENDOR)
  if(BLAS_FOUND)
    find_path(NEARSPARSE_OPENBLAS_INCLUDE_DIR NAMES openblas_config.h
              PATH_SUFFIXES openblas-openmp openblas-pthread openblas-serial openblas
                            ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp
                            ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread
                            ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-serial)
    if(NEARSPARSE_OPENBLAS_INCLUDE_DIR AND EXISTS "${NEARSPARSE_OPENBLAS_INCLUDE_DIR}/cblas.h")
      file(STRINGS "${NEARSPARSE_OPENBLAS_INCLUDE_DIR}/cblas.h" _openblas_api
           REGEX "openblas_set_num_threads")
      if(_openblas_api)
        set(NEARSPARSE_HAVE_OPENBLAS ON)
      endif()
    endif()
  endif()
  if(NEARSPARSE_HAVE_OPENBLAS)
    message(STATUS "nearsparse: OpenBLAS ${BLAS_LIBRARIES}, cblas.h in ${NEARSPARSE_OPENBLAS_INCLUDE_DIR}")
  else()
    message(STATUS "nearsparse: no OpenBLAS found; the host specializations that need it decline "
                   "and the programs compare against Kokkos Kernels gemm")
  endif()
endif()

# zlib: .gz Matrix Market files (nearsparse::io). Optional: without it a .gz file gets
# nearsparse::unsupported.
set(NEARSPARSE_HAVE_ZLIB OFF)
if(NEARSPARSE_ENABLE_ZLIB)
  find_package(ZLIB QUIET)
  if(ZLIB_FOUND)
    set(NEARSPARSE_HAVE_ZLIB ON)
    message(STATUS "nearsparse: zlib ${ZLIB_VERSION_STRING} (.gz Matrix Market files)")
  else()
    message(STATUS "nearsparse: no zlib found; .gz Matrix Market files are refused")
  endif()
endif()

# A Kokkos built to compile through CMake's CUDA language (Kokkos 4 and newer can be) needs every
# source that includes Kokkos headers compiled as that language.
function(nearsparse_kokkos_sources)
  if(DEFINED Kokkos_COMPILE_LANGUAGE AND NOT Kokkos_COMPILE_LANGUAGE STREQUAL "CXX")
    set_source_files_properties(${ARGN} PROPERTIES LANGUAGE ${Kokkos_COMPILE_LANGUAGE})
  endif()
endfunction()
