// Helpers make_schedule uses for replicated stages (schedule.cc): the replica counts checked and
// 1F1B's warm-up under unequal replication. The rest of the replica API is in schedule.h.
#pragma once

#include <vector>

#include "parallel/plan/schedule.h"

namespace baton::parallel::replica_schedule {

// Checks per-stage replica counts against the schedule's stages and micro-batches; returns G when
// every stage has G replicas (1 with none given), 0 for unequal replication.
int check_replicas(const Schedule& schedule, const std::vector<int>& replicas);

// 1F1B's warm-up forwards per stage under unequal replication (see make_schedule).
std::vector<int> unequal_warmup(const std::vector<int>& replicas);

}  // namespace baton::parallel::replica_schedule
