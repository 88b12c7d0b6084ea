// Measured profiles: run a graph's forward and backward on a device and time every node (host
// clock on CPU devices, CUDA events on GPUs), after warm-up, median of several runs, at several
// micro-batch sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parallel/plan/profile.h"
#include "runtime/core/device.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/precision.h"

namespace baton::parallel {

struct ProfilerOptions {
  std::vector<int> batch_sizes = {8, 32};
  int warmup = 2;
  int repeats = 5;
  std::string optimizer = "sgd";  // for optimiser-state bytes; the step itself is timed too
  bool allow_tf32 = true;
  bool channels_last = false;  // as Context::set_channels_last
  uint64_t seed = 1;
  // CPU devices: the threads the timed ops use (0: the calling thread's cpu_threads()). A pipeline
  // stage or a replica computes with its share of the cores (cpu_threads_per_worker), and is timed
  // with that share.
  int cpu_threads = 0;
  // CPU devices: copies of the model that train beside the timed one, each on a thread of its own
  // with the same thread count, so that the times are those of a stage worker whose neighbours are
  // computing too (they share the memory system and the caches): the stage workers that can run
  // at once, less one. 0: timed alone.
  int busy_neighbours = 0;
  // The run's dtypes: the parameters in its master dtype (the graph is built in its activation dtype).
  PrecisionPolicy precision = {};
};

// The graph's inputs are filled with random data ("labels": random classes for the loss that
// reads them). Workspace bytes per node come from Layer::cost; the optimiser step is timed over all
// parameters and stored per parameter byte.
Profile measure_profile(const Graph& graph, const std::string& model, Device device,
                        const ProfilerOptions& options = {});

}  // namespace baton::parallel
