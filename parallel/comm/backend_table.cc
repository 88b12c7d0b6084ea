// The backend table (see backend_table.h): its rows, the override's checks and the factories that
// make communicators from the row chosen.
#include "parallel/comm/backend_table.h"

#include <string>

#include "parallel/comm/inproc_communicator.h"
#include "parallel/comm/mpi_runtime.h"
#include "parallel/comm/nccl_communicator.h"
#include "runtime/core/enum_table.h"
#include "runtime/core/error.h"

namespace baton::comm {
namespace {

struct Row {
  bool gpus;
  Launcher launcher;
  CommBackend backend;
  std::string_view ranks;  // the ranks the row serves, for messages
};

constexpr Row kTable[] = {
    {false, Launcher::threads, CommBackend::inproc, "threads of one process on CPU devices"},
    {false, Launcher::processes, CommBackend::mpi, "processes under mpirun / srun on CPU devices"},
    {true, Launcher::threads, CommBackend::nccl, "GPUs driven from one process"},
    {true, Launcher::processes, CommBackend::nccl_mpi, "processes under mpirun / srun, one per GPU"},
};

constexpr CommBackend kAll[] = {CommBackend::automatic, CommBackend::inproc, CommBackend::mpi, CommBackend::nccl,
                                CommBackend::nccl_mpi};

const Row& row_of(bool gpus, Launcher launcher) {
  for (const Row& row : kTable) {
    if (row.gpus == gpus && row.launcher == launcher) return row;
  }
  BATON_FAIL("the communicator backend table has no row for ", gpus ? "GPUs" : "CPU devices");
}

const Row& row_serving(CommBackend backend) {
  for (const Row& row : kTable) {
    if (row.backend == backend) return row;
  }
  BATON_FAIL("the communicator backend table has no row for comm_backend ", comm_backend_name(backend));
}

bool needs_mpi(CommBackend backend) { return backend == CommBackend::mpi || backend == CommBackend::nccl_mpi; }

}  // namespace

std::string_view comm_backend_name(CommBackend backend) {
  constexpr std::string_view kNames[] = {"auto", "inproc", "mpi", "nccl", "nccl-mpi"};
  return enum_lookup<CommBackend::nccl_mpi>(backend, kNames, "?");
}

CommBackend parse_comm_backend(std::string_view text, std::string_view field) {
  for (CommBackend backend : kAll) {
    if (comm_backend_name(backend) == text) return backend;
  }
  BATON_FAIL(field, " '", text, "' is not a communicator backend: expected auto, inproc, mpi, nccl or nccl-mpi");
}

CommBackend choose_comm_backend(const Device& device, Launcher launcher, CommBackend requested) {
  const Row& row = row_of(device.is_cuda(), launcher);
  if (requested == CommBackend::automatic) return row.backend;
  const std::string_view name = comm_backend_name(requested);
  BATON_CHECK(requested == row.backend, "comm_backend ", name, " cannot serve ", row.ranks, " (", device.str(),
              "): it serves ", row_serving(requested).ranks, "; use auto or ", comm_backend_name(row.backend));
  BATON_CHECK(!needs_mpi(requested) || MpiRuntime::available(), "comm_backend ", name,
              ": this baton was built without MPI (configure it where CMake finds MPI), so only auto, inproc and "
              "nccl are available");
  return requested;
}

std::vector<std::unique_ptr<Communicator>> make_thread_communicators(const std::vector<Device>& devices,
                                                                     CommBackend requested, std::string_view ranks) {
  BATON_CHECK(!devices.empty(), "communicators for ", ranks, ": no device given");
  for (const Device& d : devices) {
    BATON_CHECK(d.is_cuda() == devices.front().is_cuda(), ranks, " are on ", devices.front().str(), " and ", d.str(),
                ": every rank of a communicator on a CPU device, or every one on a GPU");
  }
  if (choose_comm_backend(devices.front(), Launcher::threads, requested) == CommBackend::nccl) {
    return make_nccl_communicators(devices);
  }
  return make_inproc_communicators(static_cast<int>(devices.size()));
}

std::unique_ptr<Communicator> make_process_communicator(std::unique_ptr<Communicator> host, Device device,
                                                        CommBackend requested) {
  BATON_CHECK(host != nullptr, "a communicator for processes needs the processes' host communicator");
  if (choose_comm_backend(device, Launcher::processes, requested) == CommBackend::mpi) return host;
  return make_nccl_communicator(*host, device);
}

std::shared_ptr<Communicator> make_process_communicator(std::shared_ptr<Communicator> host, Device device,
                                                        CommBackend requested) {
  BATON_CHECK(host != nullptr, "a communicator for processes needs the processes' host communicator");
  if (choose_comm_backend(device, Launcher::processes, requested) == CommBackend::mpi) return host;
  return make_nccl_communicator(*host, device);
}

bool messages_wait_in_issue_order(CommBackend backend) {
  return backend == CommBackend::nccl || backend == CommBackend::nccl_mpi;
}

}  // namespace baton::comm
