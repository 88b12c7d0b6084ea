// The MPI test programs' environment: the process's MpiRuntime and world communicator, made by
// mpi_test_main.cc before the tests run (every rank runs every test, in the same order).
#pragma once

#include "parallel/comm/communicator.h"
#include "parallel/comm/mpi_runtime.h"

namespace baton::comm::testing {

MpiRuntime& mpi_runtime();
Communicator& mpi_world();

}  // namespace baton::comm::testing
