// TrainEngine: what the Trainer's loop runs each step on — the whole model on one device
// (SingleDeviceEngine, the default) or a pipeline of stages (parallel/pipeline/pipeline_trainer.h).
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/context.h"
#include "runtime/data/dataset.h"
#include "runtime/data/loader.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/pending_loss.h"

namespace baton {

struct EvalResult {
  double loss = 0;
  double top1 = -1;  // -1 when the task has no labels
  double top5 = -1;
  int64_t samples = 0;
  int64_t scored = 0;  // targets top1 and top5 count over: samples, or positions for per-position targets
};

// The part of every global batch this process trains on: row range `index` of `count` (as
// data::LoaderOptions::shard and shards cut it).
struct DataShard {
  int index = 0;
  int count = 1;
};

class TrainEngine {
 public:
  virtual ~TrainEngine() = default;
  // Training batches are loaded onto this context's device, ordered on its stream.
  virtual Context& input_context() = 0;
  // Initial parameters, exactly as ParamStore::initialize(seed) on the whole model gives them.
  virtual void initialize(uint64_t seed) = 0;
  // Zeroes the gradients, runs forward and backward over `batch` (the random layers keyed by
  // `seed`) and applies the optimiser with `lr`. On a GPU this only issues the work: the host does
  // not wait for it. Returns the batch's mean loss on its way to the host; its value() waits for the
  // step's loss and raises the failures the step's device checks recorded (bad labels).
  virtual PendingLoss step(const data::Batch& batch, uint64_t seed, double lr) = 0;
  // Raises deferred device-check failures before reporting anything (kernels/deferred_checks.h).
  virtual EvalResult evaluate(const data::Dataset& test, int64_t batch_size, int workers) = 0;
  // Checkpoints in the single-device format (every parameter and buffer of the whole model by name),
  // written only after the deferred device-check failures of the steps before have been raised.
  virtual std::string save_checkpoint(CheckpointManager& manager, const CheckpointState& state) = 0;
  virtual CheckpointState load_checkpoint(const std::string& dir) = 0;
  // Every parameter and buffer of the whole model from a safetensors file under torchvision names
  // (a model.safetensors, or a converted state_dict), validated in full first as load_weights does
  // (an error names the file and the tensors that differ); the optimiser's state is untouched.
  virtual void load_weights(const std::string& safetensors_path) = 0;

  // Multi-process training (data parallelism under mpirun): this process's shard of every batch,
  // whether this process prints progress and writes metrics and checkpoints (one process does),
  // and whether a flag (a stop request) is raised in any process. One process: all of it.
  virtual DataShard data_shard() const { return {}; }
  virtual bool primary() const { return true; }
  virtual bool any_rank(bool flag) { return flag; }
};

}  // namespace baton
