# Sanitizer builds: BATON_SANITIZE=address,undefined (ASan + UBSan) or thread (TSan) instruments every
# target, tests included; BATON_FUZZ adds libFuzzer's coverage and implies address,undefined.
# Sanitized builds are CPU-only or EMU and without MPI (AUTO means OFF): the CUDA libraries and Open MPI
# are not built for sanitizers. Included before BatonCuda and BatonMpi.
set(BATON_SANITIZE "" CACHE STRING "Instrument everything with sanitizers: empty, address,undefined, or thread")
set_property(CACHE BATON_SANITIZE PROPERTY STRINGS "" "address,undefined" "thread")

if(BATON_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "BATON_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(BATON_SANITIZE STREQUAL "")
    set(BATON_SANITIZE "address,undefined")
  elseif(NOT BATON_SANITIZE STREQUAL "address,undefined")
    message(FATAL_ERROR "BATON_FUZZ runs under address,undefined; BATON_SANITIZE is '${BATON_SANITIZE}'")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(NOT BATON_SANITIZE STREQUAL "")
  if(NOT BATON_SANITIZE MATCHES "^(address,undefined|address|undefined|thread)$")
    message(FATAL_ERROR "BATON_SANITIZE is '${BATON_SANITIZE}'; expected address,undefined, address, undefined or thread")
  endif()
  # AUTO means OFF here: included before BatonCuda and BatonMpi, these shadow the cache entries.
  if(BATON_CUDA STREQUAL "ON")
    message(FATAL_ERROR "BATON_SANITIZE needs BATON_CUDA=OFF or EMU: the CUDA libraries are not built for sanitizers")
  elseif(BATON_CUDA STREQUAL "AUTO")
    set(BATON_CUDA OFF)
  endif()
  if(BATON_MPI STREQUAL "ON")
    message(FATAL_ERROR "BATON_SANITIZE needs BATON_MPI=OFF: Open MPI is not built for sanitizers")
  endif()
  set(BATON_MPI OFF)
  # UBSan findings end the program (a test fails) instead of printing and going on. Reports need
  # line numbers, not full debug information (-g1 compiles much faster), unless the build type asks.
  add_compile_options(-fsanitize=${BATON_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  # -O1, as the sanitizers' documentation suggests, instead of Release's -O3: it compiles about a fifth
  # faster, and the instrumented tests are checked, not timed.
  add_compile_options($<$<CONFIG:Release,RelWithDebInfo>:-O1>)
  if(NOT CMAKE_BUILD_TYPE MATCHES "^(Debug|RelWithDebInfo)$")
    add_compile_options(-g1)
  endif()
  add_link_options(-fsanitize=${BATON_SANITIZE})
  message(STATUS "baton: instrumented with -fsanitize=${BATON_SANITIZE}")
endif()
