// PipelineLinks: the communicators through which a pipeline across processes moves activations and
// gradients between its positions. On CPUs every message goes through the pipeline's communicator
// (the mpi backend never lets one message hold up another). On GPUs each directed link between two
// positions that exchange tensors gets its own two-rank NCCL communicator, rank 0 sending and rank 1
// receiving: NCCL runs a communicator's operations in issue order on one stream, so on a shared one
// a message waiting for its receiver would hold up every message behind it (and two positions
// sending to each other at once would wait for each other for ever). See docs/hybrid.md.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "parallel/comm/backend_table.h"
#include "parallel/comm/communicator.h"
#include "parallel/pipeline/routing.h"
#include "parallel/pipeline/stage.h"
#include "runtime/core/device.h"

namespace baton::parallel {

// Where a message to or from one position goes: the communicator and the peer's rank in it.
struct PeerLink {
  comm::Communicator* comm = nullptr;
  int peer = -1;
};

class PipelineLinks {
 public:
  using Pair = std::pair<int, int>;  // (sending position, receiving position)

  // Every message through `pipeline` (rank = position), which must outlive this.
  explicit PipelineLinks(comm::Communicator& pipeline);
  // One NCCL communicator on `device` for each pair of `pairs` this position (pipeline.rank()) takes
  // part in, bootstrapped through `pipeline` (comm/backend_table.h's process row, `backend` checked).
  // Collective over `pipeline`: every position passes the same pairs.
  PipelineLinks(comm::Communicator& pipeline, const std::set<Pair>& pairs, Device device,
                comm::CommBackend backend = comm::CommBackend::automatic);
  ~PipelineLinks();
  PipelineLinks(const PipelineLinks&) = delete;
  PipelineLinks& operator=(const PipelineLinks&) = delete;

  PeerLink to(int position) const;
  PeerLink from(int position) const;

 private:
  PeerLink find(const Pair& pair, int peer) const;

  comm::Communicator* shared_ = nullptr;                       // host backends
  std::map<Pair, std::unique_ptr<comm::Communicator>> pairs_;  // GPUs: this position's links
  int position_ = -1;
};

// The links of a pipeline across processes (`processes`: its communicator, rank = position): the
// host communicator itself for CPU stages (mpi); for GPU stages (nccl-mpi, whose messages wait in
// issue order) one NCCL link per direction of every pair of positions whose stages exchange values
// (activations one way, gradients the other). `backend`: the backend table's override.
std::unique_ptr<const PipelineLinks> make_pipeline_links(comm::Communicator& processes, const PipelineRouting& routing,
                                                         const std::vector<int>& positions,
                                                         const std::vector<std::unique_ptr<PipelineStage>>& stages,
                                                         comm::CommBackend backend = comm::CommBackend::automatic);

}  // namespace baton::parallel
