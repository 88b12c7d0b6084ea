// The overlap measures of a data-parallel step: the share of all-reduce time within backward, per
// replica and counted from the moment the last replica took the bucket up (waiting for a slower
// replica is load imbalance, not communication).
#include <gtest/gtest.h>

#include "parallel/dp/step_record.h"

namespace baton::parallel {
namespace {

using Clock = ReplicaStepRecord::Clock;
using std::chrono::milliseconds;

const Clock::time_point t0 = Clock::now();
Clock::time_point at(int ms) { return t0 + milliseconds(ms); }

// A replica whose backward runs [backward, backward_end] and whose buckets' all-reduces ran
// [started, finished] each.
ReplicaStepRecord replica(int backward, int backward_end, const std::vector<std::pair<int, int>>& ran) {
  ReplicaStepRecord r;
  r.forward = at(0);
  r.backward = at(backward);
  r.backward_end = at(backward_end);
  r.end = at(backward_end + 1);
  for (const auto& [started, finished] : ran) {
    BucketTiming b;
    b.issued = at(started);
    b.ran.started = at(started);
    b.ran.finished = at(finished);
    r.buckets.push_back(b);
  }
  return r;
}

TEST(StepRecord, HiddenCommunicationIsTheShareWithinBackward) {
  // 10 ms of all-reduce, 6 of them before backward ends at 50.
  EXPECT_DOUBLE_EQ(hidden_communication_fraction(replica(10, 50, {{20, 24}, {48, 54}})), 0.6);
  EXPECT_DOUBLE_EQ(hidden_communication_fraction(replica(10, 50, {})), 1.0);
}

TEST(StepRecord, TransferIsCountedFromTheLastReplicaToReachTheBucket) {
  // Replica 0 reaches both buckets 8 to 10 ms before replica 1 and waits for it: counted from its
  // own starts, 14 of its 24 ms lie in its backward (which ends at 50); from replica 1's starts, the
  // 2 ms of bucket 0 lie in it and the 4 ms of bucket 1 after it.
  const ReplicaStepRecord fast = replica(10, 50, {{20, 32}, {48, 60}});
  const ReplicaStepRecord slow = replica(10, 60, {{30, 32}, {56, 60}});
  EXPECT_NEAR(hidden_communication_fraction(fast), 14.0 / 24.0, 1e-12);
  // fast: bucket 0 [30, 32] within, bucket 1 [56, 60] after its backward: 2 of 6; slow: both within.
  EXPECT_NEAR(hidden_transfer_fraction({fast, slow}), (2.0 / 6.0 + 1.0) / 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(hidden_transfer_fraction({slow}), 1.0);
  EXPECT_DOUBLE_EQ(hidden_transfer_fraction({}), 1.0);
}

}  // namespace
}  // namespace baton::parallel
