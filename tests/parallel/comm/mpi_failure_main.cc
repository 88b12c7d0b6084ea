// A job that loses a rank, run by run_mpi_failure.sh: after one all_reduce of every rank, rank 1
// exits with status 3 ("exit") or stops answering ("hang") while the others issue all_reduce #1.
// The job must end, non-zero, within a few seconds and name rank 1, never hang.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>

#include "parallel/comm/mpi_runtime.h"
#include "runtime/core/tensor.h"

int main(int argc, char** argv) {
  using namespace baton;
  const std::string_view scenario = argc > 1 ? argv[1] : "";
  if (scenario != "exit" && scenario != "hang") {
    std::fprintf(stderr, "usage: %s exit|hang\n", argv[0]);
    return 2;
  }
  comm::MpiRuntime runtime;
  const std::unique_ptr<comm::Communicator> world = runtime.world();
  world->set_timeout(std::chrono::milliseconds(1500));
  const Stream s = Stream::create(Device::cpu());
  const Tensor buffer = Tensor::from_vector(std::vector<float>{1.0f}, Shape{1}, s);
  world->all_reduce(buffer, comm::ReduceOp::sum, s)->wait();
  if (world->rank() == 1) {
    std::fprintf(stderr, "rank 1: %s before all_reduce #1 (a simulated failure)\n",
                 scenario == "exit" ? "exiting with status 3" : "stops answering");
    std::fflush(stderr);
    if (scenario == "exit") std::_Exit(3);
    std::this_thread::sleep_for(std::chrono::seconds(120));
  }
  world->all_reduce(buffer, comm::ReduceOp::sum, s)->wait();
  std::printf("rank %d: all_reduce #1 completed without rank 1 (unexpected)\n", world->rank());
  return 0;
}
