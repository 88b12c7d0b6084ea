// The communicator backend table: every row under auto and under its own name, every refusal (a
// backend that cannot serve the devices or the launcher, MPI in a build without it), the names, and
// the factories on CPU devices (GPUs: comm_nccl_tests and the hybrid's GPU tests make theirs here).
#include <gtest/gtest.h>

#include "parallel/comm/backend_table.h"
#include "parallel/comm/inproc_communicator.h"
#include "parallel/comm/mpi_runtime.h"
#include "tests/support/test_support.h"

namespace baton::comm {
namespace {

const Device kCpu = Device::cpu(1);
const Device kGpu = Device::cuda(0);

TEST(BackendTable, AutoChoosesEveryRow) {
  EXPECT_EQ(choose_comm_backend(kCpu, Launcher::threads), CommBackend::inproc);
  EXPECT_EQ(choose_comm_backend(kCpu, Launcher::processes), CommBackend::mpi);
  EXPECT_EQ(choose_comm_backend(kGpu, Launcher::threads), CommBackend::nccl);
  EXPECT_EQ(choose_comm_backend(kGpu, Launcher::processes), CommBackend::nccl_mpi);
}

TEST(BackendTable, EveryRowAcceptsItsOwnBackendByName) {
  EXPECT_EQ(choose_comm_backend(kCpu, Launcher::threads, CommBackend::inproc), CommBackend::inproc);
  EXPECT_EQ(choose_comm_backend(kGpu, Launcher::threads, CommBackend::nccl), CommBackend::nccl);
  if (!MpiRuntime::available()) GTEST_SKIP() << "built without MPI: the mpi rows refuse (see below)";
  EXPECT_EQ(choose_comm_backend(kCpu, Launcher::processes, CommBackend::mpi), CommBackend::mpi);
  EXPECT_EQ(choose_comm_backend(kGpu, Launcher::processes, CommBackend::nccl_mpi), CommBackend::nccl_mpi);
}

TEST(BackendTable, ABackendThatCannotServeTheRowSaysWhatWould) {
  // CPU devices in one process: only inproc.
  EXPECT_ERROR_MENTIONS(
      "comm_backend mpi cannot serve threads of one process on CPU devices (cpu:1): it serves "
      "processes under mpirun / srun on CPU devices; use auto or inproc",
      choose_comm_backend(kCpu, Launcher::threads, CommBackend::mpi));
  EXPECT_ERROR_MENTIONS(
      "comm_backend nccl cannot serve threads of one process on CPU devices (cpu:1): it serves GPUs "
      "driven from one process; use auto or inproc",
      choose_comm_backend(kCpu, Launcher::threads, CommBackend::nccl));
  EXPECT_ERROR_MENTIONS("comm_backend nccl-mpi cannot serve threads of one process on CPU devices",
                        choose_comm_backend(kCpu, Launcher::threads, CommBackend::nccl_mpi));
  // CPU devices under mpirun: only mpi.
  for (CommBackend wrong : {CommBackend::inproc, CommBackend::nccl, CommBackend::nccl_mpi}) {
    EXPECT_ERROR_MENTIONS("cannot serve processes under mpirun / srun on CPU devices (cpu:1)",
                          choose_comm_backend(kCpu, Launcher::processes, wrong));
    EXPECT_ERROR_MENTIONS("use auto or mpi", choose_comm_backend(kCpu, Launcher::processes, wrong));
  }
  // GPUs in one process: only nccl.
  for (CommBackend wrong : {CommBackend::inproc, CommBackend::mpi, CommBackend::nccl_mpi}) {
    EXPECT_ERROR_MENTIONS("cannot serve GPUs driven from one process (cuda:0)",
                          choose_comm_backend(kGpu, Launcher::threads, wrong));
    EXPECT_ERROR_MENTIONS("use auto or nccl", choose_comm_backend(kGpu, Launcher::threads, wrong));
  }
  // GPUs under mpirun: only nccl-mpi.
  for (CommBackend wrong : {CommBackend::inproc, CommBackend::mpi, CommBackend::nccl}) {
    EXPECT_ERROR_MENTIONS("cannot serve processes under mpirun / srun, one per GPU (cuda:0)",
                          choose_comm_backend(kGpu, Launcher::processes, wrong));
    EXPECT_ERROR_MENTIONS("use auto or nccl-mpi", choose_comm_backend(kGpu, Launcher::processes, wrong));
  }
}

TEST(BackendTable, MpiByNameInABuildWithoutMpiIsRefused) {
  if (MpiRuntime::available()) GTEST_SKIP() << "built with MPI";
  EXPECT_ERROR_MENTIONS("comm_backend mpi: this baton was built without MPI",
                        choose_comm_backend(kCpu, Launcher::processes, CommBackend::mpi));
  EXPECT_ERROR_MENTIONS("comm_backend nccl-mpi: this baton was built without MPI",
                        choose_comm_backend(kGpu, Launcher::processes, CommBackend::nccl_mpi));
}

TEST(BackendTable, NamesRoundTripAndAnUnknownNameIsOneError) {
  for (CommBackend b :
       {CommBackend::automatic, CommBackend::inproc, CommBackend::mpi, CommBackend::nccl, CommBackend::nccl_mpi}) {
    EXPECT_EQ(parse_comm_backend(comm_backend_name(b), "comm_backend"), b);
  }
  EXPECT_EQ(comm_backend_name(CommBackend::automatic), "auto");
  EXPECT_EQ(comm_backend_name(CommBackend::nccl_mpi), "nccl-mpi");
  EXPECT_ERROR_MENTIONS(
      "config: field 'comm_backend' 'gloo' is not a communicator backend: expected auto, inproc, "
      "mpi, nccl or nccl-mpi",
      parse_comm_backend("gloo", "config: field 'comm_backend'"));
}

TEST(BackendTable, ThreadsOnCpuDevicesGetAnInprocGroup) {
  const std::vector<std::unique_ptr<Communicator>> comms =
      make_thread_communicators({Device::cpu(0), Device::cpu(1), Device::cpu(2)});
  ASSERT_EQ(comms.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(comms[static_cast<size_t>(r)]->backend(), "inproc");
    EXPECT_EQ(comms[static_cast<size_t>(r)]->rank(), r);
    EXPECT_EQ(comms[static_cast<size_t>(r)]->size(), 3);
  }
  EXPECT_ERROR_MENTIONS("use auto or inproc", make_thread_communicators({Device::cpu(0)}, CommBackend::nccl));
}

TEST(BackendTable, ThreadsOnMixedDevicesAreOneError) {
  EXPECT_ERROR_MENTIONS(
      "stage 1's replicas are on cpu:0 and cuda:0: every rank of a communicator on a CPU device, or every one on a GPU",
      make_thread_communicators({Device::cpu(0), Device::cuda(0)}, CommBackend::automatic, "stage 1's replicas"));
  EXPECT_ERROR_MENTIONS("communicators for the ranks: no device given", make_thread_communicators({}));
}

TEST(BackendTable, ProcessesOnCpuDevicesUseTheHostCommunicatorItself) {
  std::vector<std::unique_ptr<Communicator>> hosts = make_inproc_communicators(1);
  Communicator* const host = hosts.front().get();
  const std::unique_ptr<Communicator> mine = make_process_communicator(std::move(hosts.front()), Device::cpu(0));
  EXPECT_EQ(mine.get(), host);
  std::shared_ptr<Communicator> shared = std::move(make_inproc_communicators(1).front());
  EXPECT_EQ(make_process_communicator(shared, Device::cpu(0)), shared);
  EXPECT_ERROR_MENTIONS("use auto or mpi", make_process_communicator(shared, Device::cpu(0), CommBackend::inproc));
}

TEST(BackendTable, OnlyNcclMessagesWaitInIssueOrder) {
  EXPECT_FALSE(messages_wait_in_issue_order(CommBackend::inproc));
  EXPECT_FALSE(messages_wait_in_issue_order(CommBackend::mpi));
  EXPECT_TRUE(messages_wait_in_issue_order(CommBackend::nccl));
  EXPECT_TRUE(messages_wait_in_issue_order(CommBackend::nccl_mpi));
}

}  // namespace
}  // namespace baton::comm
