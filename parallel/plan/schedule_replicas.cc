// Replicated stages in a schedule: each replica's program (its micro-batches, taken in turn), the
// micro-batches one replica holds at its peak, and one group's schedule under equal replication.
#include "parallel/plan/schedule_replicas.h"

#include <algorithm>

#include "runtime/core/error.h"

namespace baton::parallel {

namespace replica_schedule {

// 1F1B's warm-up forwards per stage under unequal replication, from the last stage back: enough to
// feed every later replica (their sum), as many per replica of its own as equal replication gives
// (r (S - s - 1)), and more than the next stage's, which keeps the schedule free of deadlock.
std::vector<int> unequal_warmup(const std::vector<int>& replicas) {
  const int stages = static_cast<int>(replicas.size());
  std::vector<int> warmup(replicas.size(), 0);
  int later = 0;  // replicas of the later stages
  for (int s = stages - 2; s >= 0; --s) {
    later += replicas[static_cast<size_t>(s + 1)];
    warmup[static_cast<size_t>(s)] =
        std::max({later, replicas[static_cast<size_t>(s)] * (stages - s - 1), warmup[static_cast<size_t>(s + 1)] + 1});
  }
  return warmup;
}

int check_replicas(const Schedule& schedule, const std::vector<int>& replicas) {
  const std::string_view name = schedule_kind_name(schedule.kind);
  if (replicas.empty()) return 1;
  BATON_CHECK(static_cast<int>(replicas.size()) == schedule.stages, name, " schedule: ", replicas.size(),
              " replica counts for ", schedule.stages, " stages");
  for (int s = 0; s < schedule.stages; ++s) {
    const int r = replicas[static_cast<size_t>(s)];
    BATON_CHECK(r >= 1 && schedule.micro_batches % r == 0, name, " schedule: stage ", s, " has ", r,
                " replicas, which must be >= 1 and divide the ", schedule.micro_batches,
                " micro-batches (each replica takes whole micro-batches in turn)");
  }
  const bool equal = std::all_of(replicas.begin(), replicas.end(), [&](int r) { return r == replicas.front(); });
  BATON_CHECK(equal || schedule.chunks() == 1, name,
              " schedule: interleaved stages need the same number of replicas on every stage");
  return equal ? replicas.front() : 0;
}

}  // namespace replica_schedule

std::vector<Instruction> replica_program(const Schedule& schedule, int position, int replica) {
  BATON_CHECK(position >= 0 && position < schedule.devices, "schedule: position ", position, " of ", schedule.devices);
  const int replicas = schedule.replicas_of(position);
  BATON_CHECK(replica >= 0 && replica < replicas, "schedule: replica ", replica, " of position ", position,
              ", which has ", replicas);
  std::vector<Instruction> out;
  for (const Instruction& in : schedule.programs[static_cast<size_t>(position)]) {
    const int r = schedule.replicas_of(in.stage);
    if (in.micro_batch < 0 || in.micro_batch % r == replica) out.push_back(in);
  }
  return out;
}

std::vector<int> replica_peak_in_flight(const Schedule& schedule) {
  std::vector<int> peak(static_cast<size_t>(schedule.stages), 0);
  for (int p = 0; p < schedule.devices; ++p) {
    for (int k = 0; k < schedule.replicas_of(p); ++k) {
      std::vector<int> held(static_cast<size_t>(schedule.stages), 0);
      for (const Instruction& in : replica_program(schedule, p, k)) {
        auto& count = held[static_cast<size_t>(in.stage)];
        if (in.op == Op::forward) ++count;
        if (in.op == Op::backward) --count;
        peak[static_cast<size_t>(in.stage)] = std::max(peak[static_cast<size_t>(in.stage)], count);
      }
    }
  }
  return peak;
}

Schedule group_schedule(const Schedule& schedule, int group) {
  const int groups = schedule.replicas_of(0);
  for (int s = 0; s < schedule.stages; ++s) {
    BATON_CHECK(schedule.replicas_of(s) == groups, "schedule: stage ", s, " has ", schedule.replicas_of(s),
                " replicas where stage 0 has ", groups, ": only equal replication splits into groups");
  }
  Schedule out = schedule;
  out.replicas.clear();
  out.micro_batches = schedule.micro_batches / groups;
  for (int p = 0; p < schedule.devices; ++p) {
    std::vector<Instruction> program = replica_program(schedule, p, group);
    for (Instruction& in : program) {
      if (in.micro_batch >= 0) in.micro_batch /= groups;
    }
    out.programs[static_cast<size_t>(p)] = std::move(program);
  }
  return out;
}

}  // namespace baton::parallel
