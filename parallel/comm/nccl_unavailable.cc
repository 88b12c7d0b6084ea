// The NCCL factories and the raw NCCL baseline in a build without CUDA: they say so (they exist so that
// callers build either way).
#include "parallel/comm/nccl_communicator.h"
#include "parallel/comm/nccl_raw.h"
#include "runtime/core/error.h"

namespace baton::comm {
namespace {

[[noreturn]] void nccl_unavailable() {
  BATON_FAIL(
      "baton was built without CUDA (BATON_HAVE_CUDA is 0), so the nccl communicator is not available: configure "
      "with -DBATON_CUDA=ON on a machine with the CUDA toolkit and NCCL (or -DBATON_CUDA=EMU for the emulated GPU)");
}

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_nccl_communicators(const std::vector<Device>&) { nccl_unavailable(); }
std::unique_ptr<Communicator> make_nccl_communicator(Communicator&, Device) { nccl_unavailable(); }

struct RawNcclAllReduce::State {};
RawNcclAllReduce::RawNcclAllReduce(const std::vector<Device>&) { nccl_unavailable(); }
RawNcclAllReduce::~RawNcclAllReduce() = default;
int RawNcclAllReduce::size() const { return 0; }
double RawNcclAllReduce::time_all_reduce(const std::vector<Tensor>&, int) { nccl_unavailable(); }

}  // namespace baton::comm
