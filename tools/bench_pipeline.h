// `baton bench pipeline`, shared pieces: settings, stage devices, and the two measurements
// (host overhead on an Identity model; throughput and simulator error on a real model).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "parallel/plan/schedule.h"
#include "runtime/core/device.h"
#include "tools/bench_timer.h"

namespace baton::cli {

struct PipelineBenchSettings {
  Device device;                      // --device (stage devices derive from it)
  std::vector<Device> stage_devices;  // one per stage (S)
  int stages = 2;
  int micro_batches = 4;
  bool quick = false;
  // Overhead part.
  int identities_per_stage = 4;
  int overhead_warmup = 20, overhead_repeats = 200;
  // Throughput part.
  std::string model;  // resnet50 on a GPU, resnet20 on the CPU
  int batch = 32;
  int image_size = 32;
  int warmup = 1, repeats = 5;
  int profile_warmup = 1, profile_repeats = 3;
};

// The stage devices for S stages: --devices as given, else cpu:0..cpu:S-1 for a CPU device (one
// virtual device, and worker thread, per stage), else S streams of the one GPU.
std::vector<Device> pipeline_stage_devices(Device device, const std::string& devices_flag, int stages);

// What would refuse the throughput part (the batch split into micro-batches, a stage per model
// node at least), checked before part 1 runs. `micro_batches_given`: --micro-batches was given.
void check_pipeline_throughput_settings(const PipelineBenchSettings& s, bool micro_batches_given);

// Part 1: an Identity model, S stages x M micro-batches, GPipe and 1F1B, against the 1-stage
// 1-micro-batch baseline. Prints its table and returns its JSON section.
nlohmann::json bench_pipeline_overhead(const PipelineBenchSettings& s);

// Parts 2 and 3: the model on one device (plain executor; pipeline with S = 1, M = 1) versus the
// block-partitioned S-stage 1F1B pipeline, and the simulator's predictions beside the measured
// step. Prints its tables and returns its JSON section.
nlohmann::json bench_pipeline_throughput(const PipelineBenchSettings& s);

}  // namespace baton::cli
