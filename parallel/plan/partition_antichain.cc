// PipeDream's antichain partitioner: exact min-max dynamic programming over the DAG's cut states
// (down-sets), so branching models are cut only where the cut is valid, with optional free
// replication per stage.
#include "parallel/plan/antichain.h"
#include "parallel/plan/partitioner.h"
#include "parallel/plan/stage_dp.h"

namespace baton::parallel {

Plan partition_antichain(const PartitionRequest& request) {
  check_request(request);
  return partition_over_cut_states(request, CutStates::antichains(*request.profile), "antichain");
}

}  // namespace baton::parallel
