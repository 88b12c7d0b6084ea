// DataLoader: worker threads, the bounded set of batch buffers, in-order delivery, seek, and the
// host-to-device copy for CUDA targets.
//
// Batches are numbered by (epoch, batch). Workers take the next number and a free buffer slot
// under the mutex, decode outside it, and file the result under its number; next() waits for the
// number it is due to return. There are workers + prefetch slots, so at most that many batches are
// decoded or waiting, and the oldest undelivered batch always holds a slot (no deadlock).
#include "runtime/data/loader.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/core/log.h"
#include "runtime/data/batch_decoder.h"
#include "runtime/data/epoch_order.h"

namespace baton::data {
namespace {

// A buffer slot. For CUDA targets it owns pinned host buffers for a full batch, reused; `copied`
// marks the last copy out of them, which a worker waits for before writing them again. For CPU
// targets the slot only bounds the work in flight: each batch gets fresh memory, handed to the user.
struct Slot {
  std::vector<Tensor> fields;  // make_fields' order: the inputs, then the targets
  std::optional<Event> copied;
};

struct Decoded {
  int slot = -1;
  std::vector<Tensor> fields;  // host tensors holding exactly the batch's samples
  std::exception_ptr error;
};

using BatchKey = std::pair<int64_t, int64_t>;  // (epoch, batch)

LoaderOptions checked_threads(LoaderOptions options) {
  BATON_CHECK(options.workers >= 1 && options.workers <= kMaxLoaderWorkers, "data loader: workers must be 1..",
              kMaxLoaderWorkers, ", not ", options.workers);
  BATON_CHECK(options.prefetch >= 1, "data loader: prefetch must be at least 1, not ", options.prefetch);
  return options;
}

Device checked(Device device) {
  check_device(device);
  return device;
}

}  // namespace

struct DataLoader::State {
  State(const Dataset& dataset_, LoaderOptions options_, Device device_)
      : dataset(dataset_),
        options(checked_threads(std::move(options_))),
        device(checked(device_)),
        decoder(dataset, options),
        batches_per_epoch(decoder.batches_per_epoch()),
        stream(Stream::create(device)) {
    const int count = options.workers + options.prefetch;
    slots.resize(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
      if (device.is_cuda()) {
        Slot& slot = slots[static_cast<size_t>(i)];
        const int64_t rows = (options.batch_size + options.shards - 1) / options.shards;
        slot.fields = decoder.make_fields(
            rows, [](const Shape& shape, DType dtype) { return Tensor::empty_host(shape, dtype, HostMemory::pinned); });
      }
      free_slots.push_back(i);
    }
  }

  ~State() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    work_available.notify_all();
    for (std::thread& worker : workers) worker.join();
    for (Slot& slot : slots) {
      if (!slot.copied) continue;
      try {
        slot.copied->synchronize();  // a copy may still read the pinned buffers
      } catch (const std::exception& e) {
        log_error("data loader shutdown: waiting for a batch copy failed: ", e.what());
      }
    }
  }

  void start() {
    for (int i = 0; i < options.workers; ++i) workers.emplace_back([this] { worker_loop(); });
  }

  void worker_loop() {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      work_available.wait(lock, [&] { return stopping || !free_slots.empty(); });
      if (stopping) return;
      const int slot = free_slots.back();
      free_slots.pop_back();
      if (next_to_decode.next_batch >= batches_per_epoch) next_to_decode = {next_to_decode.epoch + 1, 0};
      const LoaderPosition job = next_to_decode;
      ++next_to_decode.next_batch;
      const uint64_t job_generation = generation;
      Decoded result;
      std::shared_ptr<const std::vector<int64_t>> order;
      try {
        order = order_for(job.epoch);
      } catch (...) {
        result.error = std::current_exception();
      }
      lock.unlock();
      if (!result.error) result = decode(job, slot, order.get());
      result.slot = slot;
      lock.lock();
      if (stopping) return;
      if (job_generation != generation) {  // seek() discarded this batch
        free_slots.push_back(slot);
        work_available.notify_one();
        continue;
      }
      decoded.emplace(BatchKey{job.epoch, job.next_batch}, std::move(result));
      batch_ready.notify_all();
    }
  }

  // The epoch's sample order (nullptr: dataset order). Called with the mutex held.
  std::shared_ptr<const std::vector<int64_t>> order_for(int64_t epoch) {
    if (!options.shuffle) return nullptr;
    auto it = orders.find(epoch);
    if (it != orders.end()) return it->second;
    std::erase_if(orders, [&](const auto& entry) { return entry.first < epoch - 1 || entry.first > epoch + 1; });
    auto order = std::make_shared<const std::vector<int64_t>>(shuffled_order(dataset.size(), options.seed, epoch));
    orders.emplace(epoch, order);
    return order;
  }

  Decoded decode(const LoaderPosition& job, int slot_index, const std::vector<int64_t>* order) {
    Decoded out;
    try {
      const ShardRows rows = decoder.rows(job.next_batch);
      if (device.is_cuda()) {
        Slot& slot = slots[static_cast<size_t>(slot_index)];  // this worker's alone until filed
        if (slot.copied) slot.copied->synchronize();
        for (const Tensor& field : slot.fields) out.fields.push_back(field.slice(0, rows.count));
      } else {
        out.fields = decoder.make_fields(
            rows.count, [&](const Shape& shape, DType dtype) { return Tensor::empty(shape, dtype, stream); });
      }
      decoder.decode(job.epoch, rows, order, out.fields, stopping);
    } catch (Error& e) {
      e.add_context(describe(job));
      out.error = std::current_exception();
    } catch (const std::exception& e) {
      Error error(detail::concat(dataset.name(), ": ", e.what()));
      error.add_context(describe(job));
      out.error = std::make_exception_ptr(error);
    }
    return out;
  }

  std::string describe(const LoaderPosition& job) const {
    return detail::concat("loading batch ", job.next_batch, " of epoch ", job.epoch, " from ", dataset.name());
  }

  // Copies a decoded batch to the CUDA target on the copy stream; `compute_stream` waits for it.
  Batch copy_to_device(const Decoded& d, const Stream& compute_stream) {
    Slot& slot = slots[static_cast<size_t>(d.slot)];
    std::vector<Tensor> fields;
    for (const Tensor& host : d.fields) {
      fields.push_back(Tensor::empty(host.shape(), host.dtype(), stream));
      fields.back().copy_from(host, stream);
    }
    if (!slot.copied) slot.copied.emplace(device, /*timing=*/false);
    slot.copied->record(stream);
    compute_stream.wait(*slot.copied);
    // Allocated on the copy stream, used on the compute stream: the free must wait for that use.
    for (const Tensor& field : fields) field.record_stream(compute_stream);
    return decoder.to_batch(fields);
  }

  std::optional<Batch> next(const Stream& compute_stream) {
    BATON_CHECK(compute_stream.device() == device, "data loader for ", device.str(), ": next() was given a stream on ",
                compute_stream.device().str());
    std::unique_lock<std::mutex> lock(mutex);
    if (failure) std::rethrow_exception(failure);
    if (next_to_return.next_batch >= batches_per_epoch) {
      next_to_return = {next_to_return.epoch + 1, 0};
      return std::nullopt;
    }
    const BatchKey key{next_to_return.epoch, next_to_return.next_batch};
    batch_ready.wait(lock, [&] { return decoded.count(key) > 0; });
    const auto node = decoded.extract(key);
    const Decoded& d = node.mapped();
    auto release_slot = [&] {
      free_slots.push_back(d.slot);
      work_available.notify_one();
    };
    if (d.error) {
      failure = d.error;
      release_slot();
      std::rethrow_exception(failure);
    }
    Batch batch;
    if (device.is_cuda()) {
      try {
        batch = copy_to_device(d, compute_stream);
      } catch (...) {
        release_slot();
        throw;
      }
    } else {
      batch = decoder.to_batch(d.fields);
    }
    release_slot();
    batch.epoch = key.first;
    batch.index = key.second;
    ++next_to_return.next_batch;
    return batch;
  }

  void seek(LoaderPosition position) {
    BATON_CHECK(position.epoch >= 0 && position.next_batch >= 0 && position.next_batch <= batches_per_epoch,
                "data loader seek to epoch ", position.epoch, " batch ", position.next_batch,
                ": expected epoch >= 0 and a batch in 0 .. ", batches_per_epoch, " (", batches_per_epoch,
                " batches per epoch)");
    std::lock_guard<std::mutex> lock(mutex);
    ++generation;
    for (const auto& entry : decoded) free_slots.push_back(entry.second.slot);
    decoded.clear();
    failure = nullptr;
    next_to_decode = next_to_return = position;
    work_available.notify_all();
  }

  const Dataset& dataset;
  const LoaderOptions options;
  const Device device;
  const BatchDecoder decoder;
  const int64_t batches_per_epoch;
  // CUDA targets: the copy stream; CPU targets: the stream the batches' memory is allocated on.
  const Stream stream;

  mutable std::mutex mutex;
  std::condition_variable work_available, batch_ready;
  std::atomic<bool> stopping{false};
  uint64_t generation = 0;  // bumped by seek(): results of older jobs are dropped
  LoaderPosition next_to_decode, next_to_return;
  std::vector<Slot> slots;
  std::vector<int> free_slots;
  std::map<BatchKey, Decoded> decoded;
  std::map<int64_t, std::shared_ptr<const std::vector<int64_t>>> orders;
  std::exception_ptr failure;  // a batch that failed; thrown by next() until seek()
  std::vector<std::thread> workers;
};

DataLoader::DataLoader(const Dataset& dataset, LoaderOptions options, Device device)
    : state_(std::make_unique<State>(dataset, std::move(options), device)) {
  state_->start();
}

DataLoader::~DataLoader() = default;

int64_t DataLoader::batches_per_epoch() const { return state_->batches_per_epoch; }

void DataLoader::seek(LoaderPosition position) { state_->seek(position); }

LoaderPosition DataLoader::position() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->next_to_return;
}

std::optional<Batch> DataLoader::next(const Stream& compute_stream) { return state_->next(compute_stream); }

}  // namespace baton::data
