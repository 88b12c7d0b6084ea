// dataset_fingerprint: what a dataset holds, summarised without its path (its size, classes, sample
// layout and a hash of its first samples), so that the processes of a job can check that they all
// read the same data before they train on it.
#pragma once

#include <string>
#include <vector>

#include "runtime/data/dataset.h"

namespace baton::data {

// The first samples hashed (FNV-1a over their bytes and labels): enough to tell apart two datasets of
// the same size and shape, and cheap (a few reads) however large the dataset is.
inline constexpr int64_t kFingerprintSamples = 8;

// One line per item, each "<label>.<item> = <value>" ("train.samples = 50000", "train.layout =
// images [3, 32, 32] f32, targets [] i64", "train.first_samples = fnv1a 0x…").
std::vector<std::string> dataset_fingerprint(const Dataset& dataset, const std::string& label);

}  // namespace baton::data
