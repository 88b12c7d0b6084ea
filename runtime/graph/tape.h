// Tape: what one micro-batch leaves behind in forward for its backward through one executor's
// nodes: the tensors each layer saved, the range's inputs (for recomputation), and the seed of its
// random layers. Owned by the caller, one per micro-batch in flight.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/graph/layer.h"

namespace baton {

class Tape {
 public:
  bool empty() const { return !recorded_; }
  // Frees everything the tape holds.
  void clear() {
    saved_.clear();
    output_shapes_.clear();
    inputs_.clear();
    recorded_ = false;
  }

 private:
  friend class Executor;
  std::vector<std::vector<Tensor>> saved_;         // per position in the executor's node list
  std::vector<std::vector<Shape>> output_shapes_;  // per position: the shapes forward produced
  std::vector<Tensor> inputs_;                     // the range's inputs (kept when recomputing)
  uint64_t seed_ = 0;
  bool recorded_ = false;
};

}  // namespace baton
