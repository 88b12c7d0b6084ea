// ReplicatedTrainEngine: what every training engine of replicas (data parallelism, the pipelines
// and the hybrid) answers the same way across processes: this process's shard of every batch,
// whether it is the process that prints and writes, and whether a flag was raised in any process.
#pragma once

#include <functional>
#include <utility>

#include "runtime/train/train_engine.h"

namespace baton::parallel {

class ReplicatedTrainEngine : public TrainEngine {
 public:
  DataShard data_shard() const final { return shard_; }
  bool primary() const final { return primary_; }
  // One process: `flag`; several: whether any process raised it (collective over the processes).
  bool any_rank(bool flag) final { return sum_over_processes_ ? sum_over_processes_(flag ? 1.0 : 0.0) > 0 : flag; }

 protected:
  // A value summed over every process of the run (collective); unset: the run is this one process.
  using SumOverProcesses = std::function<double(double)>;
  // Set once the engine knows its processes (the defaults: one process, all of every batch).
  void set_processes(DataShard shard, bool primary, SumOverProcesses sum_over_processes) {
    shard_ = shard;
    primary_ = primary;
    sum_over_processes_ = std::move(sum_over_processes);
  }

 private:
  DataShard shard_;
  bool primary_ = true;
  SumOverProcesses sum_over_processes_;
};

}  // namespace baton::parallel
