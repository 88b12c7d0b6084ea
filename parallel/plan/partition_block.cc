// The block partitioner: the optimal contiguous split of the topological node order into stages
// (exact min-max dynamic programming over the N + 1 prefixes, O(S·N²) stage costings at most).
#include "parallel/plan/antichain.h"
#include "parallel/plan/partitioner.h"
#include "parallel/plan/stage_dp.h"
#include "runtime/core/error.h"

namespace baton::parallel {

Plan partition_block(const PartitionRequest& request) {
  BATON_CHECK(!request.free_replication,
              "partition block: free replication is the antichain partitioner's "
              "(block gives every stage the request's replicas)");
  check_request(request);
  return partition_over_cut_states(request, CutStates::prefixes(*request.profile), "block");
}

}  // namespace baton::parallel
