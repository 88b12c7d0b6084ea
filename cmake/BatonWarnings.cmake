# Warning flags for project code (never for third-party headers); errors when BATON_WERROR is on.
add_library(baton_warnings INTERFACE)
set(_baton_cxx_warnings -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
    -Woverloaded-virtual -Wimplicit-fallthrough)
if(BATON_WERROR)
  list(APPEND _baton_cxx_warnings -Werror)
endif()
target_compile_options(baton_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_baton_cxx_warnings}>)
if(BATON_HAVE_CUDA)
  set(_baton_cuda_warnings -Xcompiler=-Wall,-Wextra)
  if(BATON_WERROR)
    list(APPEND _baton_cuda_warnings -Werror=all-warnings -Xcompiler=-Werror)
  endif()
  target_compile_options(baton_warnings INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:${_baton_cuda_warnings}>)
endif()
# __FILE__ in messages relative to the project root (runtime/core/tensor.cc:42).
target_compile_options(baton_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-fmacro-prefix-map=${PROJECT_SOURCE_DIR}/=>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fmacro-prefix-map=${PROJECT_SOURCE_DIR}/=>)
