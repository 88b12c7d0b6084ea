// Making NCCL communicators: every device of this process at once (one NCCL group of non-blocking
// initialisations), or one rank per process or thread with the unique id broadcast by a bootstrap
// communicator (MPI under mpirun).
#include <nccl.h>

#include <cstring>
#include <set>

#include "parallel/comm/collective_args.h"
#include "parallel/comm/nccl_communicator.h"
#include "parallel/comm/nccl_rank.h"
#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/nccl_check.h"
#include "runtime/core/error.h"

namespace baton::comm {
namespace {

ncclConfig_t non_blocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // calls return at once; the watchdog polls ncclCommGetAsyncError
  return config;
}

void check_cuda_device(Device device, const std::string& what) {
  BATON_CHECK(device.is_cuda(), what, ": ", device.str(), " is not a CUDA device (NCCL communicates between GPUs)");
  const int count = cuda_device_count();
  BATON_CHECK(device.index() >= 0 && device.index() < count, what, ": ", device.str(), " does not exist (", count,
              " CUDA devices)");
}

// Aborts every communicator still owned when an initialisation fails half way.
struct PendingComms {
  std::vector<ncclComm_t> comms;
  ~PendingComms() {
    for (ncclComm_t comm : comms) {
      if (comm != nullptr) ncclCommAbort(comm);
    }
  }
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_nccl_communicators(const std::vector<Device>& devices) {
  BATON_CHECK(!devices.empty(), "make_nccl_communicators: no devices");
  std::set<int> seen;
  for (const Device& device : devices) {
    check_cuda_device(device, "make_nccl_communicators");
    BATON_CHECK(seen.insert(device.index()).second, "make_nccl_communicators: ", device.str(),
                " is listed twice (NCCL needs one device per rank)");
  }
  const auto timeout = default_timeout();
  const int size = static_cast<int>(devices.size());
  ncclUniqueId id;
  BATON_NCCL_CHECK(ncclGetUniqueId(&id));
  PendingComms pending;
  pending.comms.assign(devices.size(), nullptr);
  ncclConfig_t config = non_blocking_config();
  BATON_NCCL_CHECK(ncclGroupStart());
  try {
    for (int r = 0; r < size; ++r) {
      const CudaDeviceGuard guard(devices[static_cast<size_t>(r)].index());
      const ncclResult_t result = ncclCommInitRankConfig(&pending.comms[static_cast<size_t>(r)], size, id, r, &config);
      if (result != ncclInProgress) BATON_NCCL_CHECK(result);
    }
  } catch (...) {
    ncclGroupEnd();  // leave no group open on this thread; the error is the one thrown
    throw;
  }
  const ncclResult_t ended = ncclGroupEnd();
  if (ended != ncclInProgress) BATON_NCCL_CHECK(ended);
  std::vector<std::unique_ptr<Communicator>> communicators;
  for (int r = 0; r < size; ++r) {
    const std::string what = detail::concat("the initialisation of nccl rank ", r, " of ", size);
    NcclRank::await_ready(pending.comms[static_cast<size_t>(r)], what, timeout);
  }
  for (int r = 0; r < size; ++r) {
    ncclComm_t& comm = pending.comms[static_cast<size_t>(r)];
    communicators.push_back(make_nccl_rank_communicator(comm, devices[static_cast<size_t>(r)], r, size, timeout));
    comm = nullptr;  // owned by the communicator now
  }
  return communicators;
}

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, Device device) {
  const std::string what = detail::concat("nccl rank ", bootstrap.rank(), " of ", bootstrap.size(), " on ",
                                          device.str(), " (bootstrapped over ", bootstrap.backend(), ")");
  check_cuda_device(device, what);
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (bootstrap.rank() == 0) BATON_NCCL_CHECK(ncclGetUniqueId(&id));
  const Stream host = Stream::create(Device::cpu());
  Tensor bytes = Tensor::empty(Shape{static_cast<int64_t>(sizeof(id))}, DType::u8, host);
  std::memcpy(bytes.data_ptr(), &id, sizeof(id));
  bootstrap.broadcast(bytes, 0, host)->wait();
  std::memcpy(&id, bytes.data_ptr(), sizeof(id));
  const auto timeout = default_timeout();
  PendingComms pending;
  pending.comms.assign(1, nullptr);
  ncclConfig_t config = non_blocking_config();
  {
    const CudaDeviceGuard guard(device.index());
    const ncclResult_t result =
        ncclCommInitRankConfig(&pending.comms[0], bootstrap.size(), id, bootstrap.rank(), &config);
    if (result != ncclInProgress) BATON_NCCL_CHECK(result);
  }
  NcclRank::await_ready(pending.comms[0], "the initialisation of " + what, timeout);
  ncclComm_t comm = pending.comms[0];
  pending.comms[0] = nullptr;
  return make_nccl_rank_communicator(comm, device, bootstrap.rank(), bootstrap.size(), timeout);
}

}  // namespace baton::comm
