// PipelineLinks: the pipeline's own communicator on CPUs, a two-rank NCCL communicator per directed
// link on GPUs (split from the pipeline's, which carries the NCCL unique id).
#include "parallel/pipeline/pipeline_links.h"

#include "parallel/comm/nccl_communicator.h"
#include "runtime/core/error.h"

namespace baton::parallel {

PipelineLinks::PipelineLinks(comm::Communicator& pipeline) : shared_(&pipeline), position_(pipeline.rank()) {}

PipelineLinks::PipelineLinks(comm::Communicator& pipeline, const std::set<Pair>& pairs, Device device)
    : position_(pipeline.rank()) {
  BATON_CHECK(device.is_cuda(), "per-link communicators are for GPUs (NCCL), not ", device.str());
  // Every position takes part in every split, in the same order; only the two ends of a link join
  // its NCCL communicator (sender rank 0, receiver rank 1).
  for (const Pair& pair : pairs) {
    const bool sender = pair.first == position_;
    const bool member = sender || pair.second == position_;
    std::unique_ptr<comm::Communicator> bootstrap = pipeline.split(member ? 0 : -1, sender ? 0 : 1);
    if (!member) continue;
    pairs_.emplace(pair, comm::make_nccl_communicator(*bootstrap, device));
  }
}

PipelineLinks::~PipelineLinks() = default;

PeerLink PipelineLinks::find(const Pair& pair, int peer) const {
  if (shared_ != nullptr) return {shared_, peer};
  const auto it = pairs_.find(pair);
  BATON_CHECK(it != pairs_.end(), "pipeline position ", pair.first, " has no link to position ", pair.second,
              " (no stage of one reads the other's values)");
  return {it->second.get(), pair.first == position_ ? 1 : 0};
}

PeerLink PipelineLinks::to(int position) const { return find({position_, position}, position); }

PeerLink PipelineLinks::from(int position) const { return find({position, position_}, position); }

}  // namespace baton::parallel
