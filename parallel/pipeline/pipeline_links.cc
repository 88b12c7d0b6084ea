// PipelineLinks: the pipeline's own communicator on CPUs, a two-rank NCCL communicator per directed
// link on GPUs (split from the pipeline's, which carries the NCCL unique id; the backend table decides),
// and the links a pipeline needs.
#include "parallel/pipeline/pipeline_links.h"

#include <algorithm>

#include "parallel/comm/backend_table.h"
#include "runtime/core/error.h"

namespace baton::parallel {

PipelineLinks::PipelineLinks(comm::Communicator& pipeline) : shared_(&pipeline), position_(pipeline.rank()) {}

PipelineLinks::PipelineLinks(comm::Communicator& pipeline, const std::set<Pair>& pairs, Device device,
                             comm::CommBackend backend)
    : position_(pipeline.rank()) {
  BATON_CHECK(comm::messages_wait_in_issue_order(comm::choose_comm_backend(device, comm::Launcher::processes, backend)),
              "per-link communicators are for backends whose messages wait in issue order (NCCL), not for ",
              device.str());
  // Every position takes part in every split, in the same order; only the two ends of a link join
  // its NCCL communicator (sender rank 0, receiver rank 1).
  for (const Pair& pair : pairs) {
    const bool sender = pair.first == position_;
    const bool member = sender || pair.second == position_;
    std::unique_ptr<comm::Communicator> bootstrap = pipeline.split(member ? 0 : -1, sender ? 0 : 1);
    if (!member) continue;
    pairs_.emplace(pair, comm::make_process_communicator(std::move(bootstrap), device, backend));
  }
}

PipelineLinks::~PipelineLinks() = default;

std::unique_ptr<const PipelineLinks> make_pipeline_links(comm::Communicator& processes, const PipelineRouting& routing,
                                                         const std::vector<int>& positions,
                                                         const std::vector<std::unique_ptr<PipelineStage>>& stages,
                                                         comm::CommBackend backend) {
  const auto local = std::find_if(stages.begin(), stages.end(), [](const auto& stage) { return stage != nullptr; });
  if (local == stages.end()) return std::make_unique<PipelineLinks>(processes);
  const Device device = (*local)->device();
  if (!comm::messages_wait_in_issue_order(comm::choose_comm_backend(device, comm::Launcher::processes, backend))) {
    return std::make_unique<PipelineLinks>(processes);
  }
  std::set<PipelineLinks::Pair> pairs;
  for (size_t s = 0; s < routing.consumers().size(); ++s) {
    for (int consumer : routing.consumers()[s]) {
      const int from = positions[s], to = positions.at(static_cast<size_t>(consumer));
      if (from == to) continue;
      pairs.insert({from, to});
      pairs.insert({to, from});
    }
  }
  return std::make_unique<PipelineLinks>(processes, pairs, device, backend);
}

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
