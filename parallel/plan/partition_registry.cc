// Partitioners by name.
#include "parallel/plan/partitioner.h"
#include "runtime/core/error.h"

namespace baton::parallel {

std::vector<std::string> partitioner_names() { return {"uniform", "block", "antichain", "hypergraph"}; }

Plan partition(std::string_view partitioner, const PartitionRequest& request) {
  if (partitioner == "uniform") return partition_uniform(request);
  if (partitioner == "block") return partition_block(request);
  if (partitioner == "antichain") return partition_antichain(request);
  if (partitioner == "hypergraph") return partition_hypergraph(request);
  BATON_FAIL("unknown partitioner '", partitioner, "' (expected uniform, block, antichain or hypergraph)");
}

}  // namespace baton::parallel
