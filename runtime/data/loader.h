// DataLoader: batches of a Dataset (named input tensors and targets, runtime/data/batch.h) on a device. Background
// workers decode (and augment and normalise) whole batches into host buffers, pinned when the
// target is a GPU, a bounded number ahead; for CUDA targets next() copies a batch to the device on
// a dedicated copy stream and makes the caller's compute stream wait for it.
//
// Determinism: an epoch's order is a Philox permutation keyed by (seed, epoch) and a sample's
// augmentation is keyed by (seed, epoch, sample index), so the batches are the same whatever the
// worker count, timing or device, and seek() resumes a run exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "runtime/core/device.h"
#include "runtime/core/stream.h"
#include "runtime/core/tensor.h"
#include "runtime/data/batch.h"
#include "runtime/data/dataset.h"
#include "runtime/data/loader_position.h"
#include "runtime/data/sample_transform.h"

namespace baton::data {

// The most decoding threads a loader runs (far more than any machine's cores would keep busy).
inline constexpr int kMaxLoaderWorkers = 256;

struct LoaderOptions {
  int64_t batch_size = 128;
  bool shuffle = true;     // false: dataset order, every epoch
  bool drop_last = false;  // drop the last, smaller batch of an epoch
  uint64_t seed = 0;
  int workers = 2;   // threads decoding batches (at least 1)
  int prefetch = 2;  // batches kept ready beyond the ones being decoded (at least 1)
  Augmentation augmentation;
  Normalization normalization;
  // Data parallelism across processes: every batch of batch_size samples (the same order on every
  // rank) is cut into `shards` row ranges whose sizes differ by at most one (the first ones larger),
  // and this loader yields range `shard` of each (0 <= shard < shards).
  int shard = 0;
  int shards = 1;
};

class DataLoader {
 public:
  // `dataset` must outlive the loader. Starts the workers, which begin decoding epoch 0 at once.
  DataLoader(const Dataset& dataset, LoaderOptions options, Device device);
  // Stops and joins the workers (also mid-epoch) and waits for copies still reading host buffers.
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  int64_t batches_per_epoch() const;
  // Makes the next next() return batch `position.next_batch` of `position.epoch`, exactly as an
  // uninterrupted run would have (same samples, same augmentation). Work in flight is discarded.
  void seek(LoaderPosition position);
  // The position of the batch the next next() returns.
  LoaderPosition position() const;
  // The next batch, or nullopt at the end of an epoch (the call after that starts the next epoch).
  // `compute_stream` (on the target device) is where the batch will be used: for CUDA targets the
  // batch is copied on the loader's copy stream and compute_stream waits for the copy; on CPU
  // devices the batch is the host buffers the worker filled. A worker's failure (a bad record, a
  // dataset error) is thrown here, as a baton::Error with the dataset's message, when the batch
  // it was decoding is due; the loader then keeps throwing it until seek().
  std::optional<Batch> next(const Stream& compute_stream);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace baton::data
