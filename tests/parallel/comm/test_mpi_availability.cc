// MpiRuntime in any build: available() says whether baton was built with MPI, and a build without
// MPI refuses to make one with a message saying how to get it (the mpi tests run under mpiexec).
#include <gtest/gtest.h>

#include "parallel/comm/mpi_runtime.h"
#include "runtime/core/build_config.h"
#include "tests/support/test_support.h"

namespace baton::comm {
namespace {

TEST(MpiAvailability, MatchesTheBuild) { EXPECT_EQ(MpiRuntime::available(), BATON_HAVE_MPI == 1); }

TEST(MpiAvailability, ABuildWithoutMpiSaysHowToGetIt) {
  if (MpiRuntime::available()) GTEST_SKIP() << "built with MPI: comm_mpi_tests runs the mpi backend under mpiexec";
  EXPECT_ERROR_MENTIONS("baton was built without MPI (BATON_HAVE_MPI is 0): install Open MPI", MpiRuntime());
}

}  // namespace
}  // namespace baton::comm
