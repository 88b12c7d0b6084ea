# BATON_MPI=AUTO|ON|OFF: finds MPI for multi-process runs (used by the parallel subsystem).
include(BatonFind)
set(BATON_HAVE_MPI OFF)
baton_find_cxx_package(BATON_MPI MPI)
if(MPI_CXX_FOUND)
  set(BATON_HAVE_MPI ON)
endif()
baton_have_01(MPI)

# The mpi tests need mpiexec as well as the library. Open MPI refuses to start as root (CI runs in
# containers as root) and to start more processes than there are cores (CI has 2) unless told to.
set(BATON_HAVE_MPI_TESTS OFF)
set(BATON_MPIEXEC_FLAGS "")
if(BATON_HAVE_MPI)
  if(MPIEXEC_EXECUTABLE)
    set(BATON_HAVE_MPI_TESTS ON)
    execute_process(COMMAND "${MPIEXEC_EXECUTABLE}" --version OUTPUT_VARIABLE _baton_mpiexec_version
                    ERROR_VARIABLE _baton_mpiexec_version RESULT_VARIABLE _baton_mpiexec_result)
    if(_baton_mpiexec_version MATCHES "Open MPI|OpenRTE")
      set(BATON_MPIEXEC_FLAGS --allow-run-as-root --oversubscribe)
    endif()
  else()
    message(STATUS "baton: MPI found but no mpiexec: the mpi tests are not registered (install openmpi-bin)")
  endif()
endif()
