# Warnings and sanitizers for the project's own targets (library, tests, programs, benchmarks):
# set per target by nearsparse_own_target(<target>), never through global flags, so dependencies
# (Kokkos, Kokkos Kernels, Catch2, Google Benchmark: all included as SYSTEM through their imported
# targets) are compiled and diagnosed as they come.
#
#   NEARSPARSE_WARNINGS_AS_ERRORS  warnings of our code fail the build (-Werror on the host
#                                  compiler; with nvcc also its own front end's warnings)
#   NEARSPARSE_ENABLE_SANITIZERS   AddressSanitizer and UndefinedBehaviorSanitizer on the host
#                                  compiler; an undefined-behaviour finding stops the program

option(NEARSPARSE_WARNINGS_AS_ERRORS "Turn warnings of the project's own code into errors" OFF)
option(NEARSPARSE_ENABLE_SANITIZERS
       "Build the project's own targets with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

# nvcc_wrapper (Kokkos 3.x CUDA builds) compiles the CXX language: host-compiler options pass
# through it, nvcc's own ones need its spelling.
get_filename_component(_nearsparse_cxx_name "${CMAKE_CXX_COMPILER}" NAME)
if(_nearsparse_cxx_name MATCHES "nvcc")
  set(NEARSPARSE_CXX_IS_NVCC ON)
else()
  set(NEARSPARSE_CXX_IS_NVCC OFF)
endif()

set(NEARSPARSE_WARNING_OPTIONS
    $<$<COMPILE_LANGUAGE:CXX>:-Wall> $<$<COMPILE_LANGUAGE:CXX>:-Wextra>
    # Kokkos built for CMake's CUDA language (Kokkos 4 and newer can be): the host compiler's
    # warnings through -Xcompiler.
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
if(NEARSPARSE_WARNINGS_AS_ERRORS)
  list(APPEND NEARSPARSE_WARNING_OPTIONS $<$<COMPILE_LANGUAGE:CXX>:-Werror>
       $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Werror> $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
  if(NEARSPARSE_CXX_IS_NVCC)
    # nvcc's front end (cudafe++) reports its warnings (#186-D, #549-D, #128-D...) as errors.
    list(APPEND NEARSPARSE_WARNING_OPTIONS -Xcudafe --promote_warnings)
  endif()
endif()

# The same for sources nvcc compiles directly (the sm_90a SpAMM kernel, src/CMakeLists.txt).
set(NEARSPARSE_NVCC_WARNING_OPTIONS -Xcompiler=-Wall,-Wextra)
if(NEARSPARSE_WARNINGS_AS_ERRORS)
  list(APPEND NEARSPARSE_NVCC_WARNING_OPTIONS -Xcompiler=-Werror -Werror=all-warnings)
endif()

set(NEARSPARSE_SANITIZER_OPTIONS "")
if(NEARSPARSE_ENABLE_SANITIZERS)
  if(NEARSPARSE_HAVE_CUDA)
    message(FATAL_ERROR "NEARSPARSE_ENABLE_SANITIZERS is for host builds (OpenMP, Serial); on a "
                        "GPU use compute-sanitizer (scripts/gpu_run.sh --sanitize)")
  endif()
  set(NEARSPARSE_SANITIZER_OPTIONS -fsanitize=address,undefined -fno-omit-frame-pointer
                                   -fno-sanitize-recover=undefined)
  if(NEARSPARSE_WARNINGS_AS_ERRORS AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC's manual: the sanitizers' instrumentation raises the rate of false positives of its
    # flow-based warnings, and it recommends against -Werror with them (GCC 12 reports
    # -Wrestrict inside std::string's operator+ under -fsanitize=address). These stay warnings
    # in a sanitizer build; the builds without sanitizers still fail on them.
    list(APPEND NEARSPARSE_SANITIZER_OPTIONS -Wno-error=maybe-uninitialized -Wno-error=restrict
         -Wno-error=array-bounds -Wno-error=stringop-overflow -Wno-error=stringop-overread)
  endif()
endif()

# nearsparse_own_target(<target>): the warning and sanitizer options on one of our targets.
# PRIVATE, so the installed package passes none of them on to its consumers.
function(nearsparse_own_target target)
  target_compile_options(${target} PRIVATE ${NEARSPARSE_WARNING_OPTIONS})
  if(NEARSPARSE_SANITIZER_OPTIONS)
    target_compile_options(${target} PRIVATE ${NEARSPARSE_SANITIZER_OPTIONS})
    get_target_property(_type ${target} TYPE)
    if(_type STREQUAL "EXECUTABLE" OR _type STREQUAL "SHARED_LIBRARY")
      target_link_options(${target} PRIVATE -fsanitize=address,undefined)
    endif()
  endif()
endfunction()
