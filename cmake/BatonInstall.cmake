# Install rules and the CMake package. `cmake --install build --prefix P` installs the libraries,
# the `baton` CLI, the public headers (P/include/baton/runtime/core/tensor.h, ...) and
# P/lib/cmake/baton/batonConfig.cmake, so other projects can find_package(baton) and link baton::baton.
include(CMakePackageConfigHelpers)

# Libraries in the export set (a new library floor is added here) and the folders whose
# headers are public: every *.h under them is installed, found when installing (no list to edit).
set(BATON_EXPORTED_LIBRARIES baton_core baton_kernels baton_graph baton_layers baton_data baton_train baton_models baton_comm baton_plan baton_parallel)
set(BATON_PUBLIC_HEADER_DIRS runtime kernels layers models parallel)

set(BATON_INSTALL_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}/baton")
set(BATON_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/baton")

# RPATH: installed libraries find each other and the CLI finds them in ../lib wherever the prefix
# is; libraries from outside the prefix (CUDA, cuDNN, NCCL) are found where they were at link time.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(_baton_cli_rpath "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH _baton_bin_to_lib "/p/${CMAKE_INSTALL_BINDIR}" "/p/${CMAKE_INSTALL_LIBDIR}")
  set(_baton_cli_rpath "$ORIGIN/${_baton_bin_to_lib}")
endif()
set_target_properties(${BATON_EXPORTED_LIBRARIES} PROPERTIES INSTALL_RPATH "$ORIGIN" INSTALL_RPATH_USE_LINK_PATH ON)
set_target_properties(baton_cli PROPERTIES INSTALL_RPATH "${_baton_cli_rpath}" INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS ${BATON_EXPORTED_LIBRARIES} baton_all EXPORT batonTargets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(TARGETS baton_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")

# Headers keep their source paths (include/baton/runtime/core/tensor.h). CUDA headers (cuda/
# folders) only in a CUDA build; *.cuh files are nvcc-only and not installed.
set(_baton_header_filters PATTERN "*.h")
# parallel/comm/mpi_calls.h includes <mpi.h>: internal to the mpi backend's sources.
list(APPEND _baton_header_filters PATTERN "mpi_calls.h" EXCLUDE)
# parallel/comm/nccl_rank.h includes <nccl.h>: internal to the nccl backend's sources (the public
# header is nccl_communicator.h).
list(APPEND _baton_header_filters PATTERN "nccl_rank.h" EXCLUDE)
# kernels/batch_norm_cudnn_args.h is the batch norm front end's internal bridge to its cuDNN launchers.
if(NOT BATON_HAVE_CUDA)
  list(APPEND _baton_header_filters PATTERN "cuda" EXCLUDE PATTERN "batch_norm_cudnn_args.h" EXCLUDE)
endif()
foreach(_dir IN LISTS BATON_PUBLIC_HEADER_DIRS)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/${_dir}" DESTINATION "${BATON_INSTALL_INCLUDEDIR}"
          FILES_MATCHING ${_baton_header_filters})
endforeach()
install(DIRECTORY "${PROJECT_BINARY_DIR}/generated/" DESTINATION "${BATON_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")

install(EXPORT batonTargets NAMESPACE baton:: DESTINATION "${BATON_INSTALL_CMAKEDIR}" FILE batonTargets.cmake)

# find_dependency() calls for the packages the exported link interfaces name (static libraries
# carry their private dependencies as $<LINK_ONLY:...>, so those are covered too). CUDAToolkit is
# handled in batonConfig.cmake.in.
set(_baton_interface_links "")
foreach(_target IN LISTS BATON_EXPORTED_LIBRARIES)
  get_target_property(_links ${_target} INTERFACE_LINK_LIBRARIES)
  if(_links)
    string(APPEND _baton_interface_links "${_links};")
  endif()
endforeach()
set(BATON_FIND_DEPENDENCIES "")
macro(_baton_dependency_if_linked namespace)
  string(FIND "${_baton_interface_links}" "${namespace}" _pos)
  if(_pos GREATER -1)
    set(_args ${ARGN})
    list(JOIN _args " " _args)
    string(APPEND BATON_FIND_DEPENDENCIES "find_dependency(${_args})\n")
  endif()
endmacro()
_baton_dependency_if_linked("Eigen3::" Eigen3 NO_MODULE)
_baton_dependency_if_linked("nlohmann_json::" nlohmann_json)
_baton_dependency_if_linked("CLI11::" CLI11)
_baton_dependency_if_linked("MPI::" MPI COMPONENTS CXX)
_baton_dependency_if_linked("Threads::" Threads)
_baton_dependency_if_linked("DNNL::" dnnl)
_baton_dependency_if_linked("OpenMP::" OpenMP COMPONENTS CXX)

# The toolkit baton was built with: a hint for find_dependency(CUDAToolkit) when nvcc is not on PATH.
set(BATON_CUDA_TOOLKIT_ROOT "")
if(BATON_HAVE_CUDA)
  get_filename_component(BATON_CUDA_TOOLKIT_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()

configure_package_config_file(cmake/batonConfig.cmake.in "${PROJECT_BINARY_DIR}/cmake/batonConfig.cmake"
  INSTALL_DESTINATION "${BATON_INSTALL_CMAKEDIR}"
  PATH_VARS BATON_INSTALL_INCLUDEDIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/batonConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/cmake/batonConfig.cmake" "${PROJECT_BINARY_DIR}/cmake/batonConfigVersion.cmake"
        DESTINATION "${BATON_INSTALL_CMAKEDIR}")
