# BATON_CUDA=AUTO|ON|OFF|EMU: enables CUDA and finds the toolkit, cuBLAS, cuDNN and NCCL; EMU builds
# the CUDA backend for the emulated GPU of tests/emu instead (no toolkit needed; see cmake/BatonEmu.cmake).
# cuDNN and NCCL are looked for under CUDNN_ROOT / NCCL_ROOT (CMake or environment variables),
# then in the CUDA toolkit's folders; versioned-only libraries (libcudnn.so.9) are accepted.
include(CheckLanguage)

set(BATON_HAVE_CUDA OFF)
set(BATON_CUDA_EMULATED OFF)
set(BATON_CUDA_EMULATED_01 0)
if(NOT BATON_CUDA MATCHES "^(AUTO|ON|OFF|EMU)$")
  message(FATAL_ERROR "BATON_CUDA must be AUTO, ON, OFF or EMU (got '${BATON_CUDA}')")
endif()

# baton_cuda_sources_one_by_one(<target>): the target's .cu files compile one by one with every CMake.
# CMake 3.31 and later would put them in unity batches, which older ones cannot: a name clash between
# two .cu files would then show only with the newer CMake (as one did, with 4.4), never in CI's.
function(baton_cuda_sources_one_by_one target)
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources INCLUDE REGEX "\\.cu$")
  set_source_files_properties(${sources} TARGET_DIRECTORY ${target} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()

if(BATON_CUDA STREQUAL "EMU")
  set(BATON_HAVE_CUDA ON)
  set(BATON_CUDA_EMULATED ON)
  set(BATON_CUDA_EMULATED_01 1)
  set(BATON_HAVE_CUDA_01 1)
  include(BatonEmu)
  message(STATUS "baton: CUDA backend on the emulated GPU (tests/emu), no toolkit used")
  return()
endif()

if(NOT BATON_CUDA STREQUAL "OFF")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_package(CUDAToolkit QUIET)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    set(BATON_HAVE_CUDA ON)
  elseif(BATON_CUDA STREQUAL "ON")
    message(FATAL_ERROR "BATON_CUDA=ON but no CUDA compiler/toolkit was found: put nvcc on PATH or set "
                        "CMAKE_CUDA_COMPILER, or configure with -DBATON_CUDA=OFF")
  else()
    message(STATUS "baton: nvcc or the CUDA toolkit not found; building the CPU-only runtime")
  endif()
endif()

# Finds one CUDA-side library (header + shared library) and defines an imported target.
#   baton_find_cuda_library(<prefix> <target> <header> <root-var> <lib-names...>)
function(baton_find_cuda_library prefix target header root_var)
  set(names ${ARGN})
  set(roots "")
  if(DEFINED ${root_var})
    list(APPEND roots "${${root_var}}")
  endif()
  if(DEFINED ENV{${root_var}})
    list(APPEND roots "$ENV{${root_var}}")
  endif()
  set(toolkit_dirs "${CUDAToolkit_LIBRARY_ROOT}" "${CUDAToolkit_TARGET_DIR}" "${CUDAToolkit_LIBRARY_DIR}/..")
  find_path(${prefix}_INCLUDE_DIR ${header}
            HINTS ${roots} ${CUDAToolkit_INCLUDE_DIRS} ${toolkit_dirs}
            PATH_SUFFIXES include)
  set(all_names "")
  foreach(n IN LISTS names)
    list(APPEND all_names ${n} lib${n}.so)
  endforeach()
  # Versioned-only installs (e.g. Python wheels) ship libX.so.N and no libX.so.
  foreach(v 9 8 2)
    foreach(n IN LISTS names)
      list(APPEND all_names lib${n}.so.${v})
    endforeach()
  endforeach()
  find_library(${prefix}_LIBRARY NAMES ${all_names}
               HINTS ${roots} ${CUDAToolkit_LIBRARY_DIR} ${toolkit_dirs}
               PATH_SUFFIXES lib lib64 lib/x64 lib/x86_64-linux-gnu)
  if(NOT ${prefix}_INCLUDE_DIR OR NOT ${prefix}_LIBRARY)
    message(FATAL_ERROR "baton: CUDA is on but ${header} / lib${names} was not found "
                        "(include: ${${prefix}_INCLUDE_DIR}, library: ${${prefix}_LIBRARY}). "
                        "Set ${root_var} to its install prefix, or configure with -DBATON_CUDA=OFF.")
  endif()
  if(NOT TARGET ${target})
    add_library(${target} UNKNOWN IMPORTED)
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${${prefix}_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${${prefix}_INCLUDE_DIR}")
  endif()
  message(STATUS "baton: ${prefix} ${${prefix}_LIBRARY}")
endfunction()


if(BATON_HAVE_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "${BATON_CUDA_ARCHS}")
  endif()
  enable_language(CUDA)
  # CMake before 3.26 does not know nvcc's C++20 flag (nvcc >= 12 accepts -std=c++20).
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_EXTENSIONS OFF)
  find_package(CUDAToolkit REQUIRED)
  baton_find_cuda_library(CUDNN baton_cudnn cudnn.h CUDNN_ROOT cudnn)
  baton_find_cuda_library(NCCL baton_nccl nccl.h NCCL_ROOT nccl)
  set(BATON_HAVE_CUDA_01 1)
else()
  set(BATON_HAVE_CUDA_01 0)
endif()
