// Losses read back asynchronously: pinned buffers and events reused across steps, the deferred
// device checks copied with the losses and raised when the loss is asked for.
#include "runtime/train/pending_loss.h"

#include <cstring>

#include "kernels/deferred_checks.h"
#include "runtime/core/error.h"
#include "runtime/core/storage.h"

namespace baton {
namespace detail {

// One read-back: the pinned buffer ([deferred-check record][one 8-byte entry per loss]), the event
// after the copies, and how to combine the losses. Owned by the LossReadback; lent to one
// PendingLoss at a time.
struct LossSlot {
  LossSlot(Device device_, size_t capacity_)
      : device(device_),
        capacity(capacity_),
        host(Storage::allocate_host(kernels::kDeferredCheckBytes + 8 * capacity_, HostMemory::pinned)),
        copied(device_, /*timing=*/false) {}

  unsigned char* record() const { return static_cast<unsigned char*>(host->data()); }
  unsigned char* entry(size_t i) const { return record() + kernels::kDeferredCheckBytes + 8 * i; }

  const Device device;
  const size_t capacity;
  std::shared_ptr<Storage> host;
  Event copied;
  bool waited = true;  // the copies into `host` are known to have completed
  std::vector<DType> dtypes;
  std::vector<double> weights;
  std::function<std::string(int64_t)> describe_tag;
};

}  // namespace detail

namespace {

double entry_value(const unsigned char* bytes, DType dtype) {
  if (dtype == DType::f64) {
    double v = 0;
    std::memcpy(&v, bytes, sizeof(v));
    return v;
  }
  float v = 0;
  std::memcpy(&v, bytes, sizeof(v));
  return static_cast<double>(v);
}

// sum_i weights[i] * losses[i] in order, as the single-device and pipelined steps always combined them.
double weighted_sum(const std::vector<double>& values, const std::vector<double>& weights) {
  double loss = 0;
  for (size_t i = 0; i < values.size(); ++i) loss += values[i] * weights[i];
  return loss;
}

}  // namespace

PendingLoss::PendingLoss(double value) : value_(value) {}
PendingLoss::~PendingLoss() = default;
PendingLoss::PendingLoss(PendingLoss&&) noexcept = default;
PendingLoss& PendingLoss::operator=(PendingLoss&&) noexcept = default;

double PendingLoss::value() {
  if (error_) std::rethrow_exception(error_);
  if (!value_) value_ = resolve_slot();
  double sum = *value_;
  try {
    for (PendingLoss& other : others_) sum += other.value();
  } catch (...) {
    error_ = std::current_exception();
    throw;
  }
  if (combine_ == Combine::average) value_ = sum / static_cast<double>(1 + others_.size());
  if (combine_ == Combine::sum) value_ = sum;
  combine_ = Combine::none;
  others_.clear();
  return *value_;
}

void PendingLoss::also_resolve(std::vector<PendingLoss> others) {
  BATON_CHECK(combine_ == Combine::none, "PendingLoss: also_resolve after average_with or sum_with");
  for (PendingLoss& other : others) others_.push_back(std::move(other));
}

void PendingLoss::average_with(std::vector<PendingLoss> others) {
  BATON_CHECK(others_.empty(), "PendingLoss: average_with after also_resolve or sum_with");
  combine_ = Combine::average;
  for (PendingLoss& other : others) others_.push_back(std::move(other));
}

void PendingLoss::sum_with(std::vector<PendingLoss> others) {
  BATON_CHECK(others_.empty(), "PendingLoss: sum_with after also_resolve or average_with");
  combine_ = Combine::sum;
  for (PendingLoss& other : others) others_.push_back(std::move(other));
}

double PendingLoss::resolve_slot() {
  BATON_CHECK(slot_ != nullptr, "PendingLoss::value: no loss (a default-constructed PendingLoss)");
  const std::shared_ptr<detail::LossSlot> slot = std::move(slot_);  // back to the readback when done
  slot->copied.synchronize();
  slot->waited = true;
  try {
    kernels::raise_deferred_errors(slot->record());
  } catch (Error& e) {
    const int64_t tag = kernels::deferred_error_tag(slot->record());
    if (tag >= 0 && slot->describe_tag) e.add_context(slot->describe_tag(tag));
    error_ = std::current_exception();
    throw;
  }
  std::vector<double> values;
  for (size_t i = 0; i < slot->dtypes.size(); ++i) values.push_back(entry_value(slot->entry(i), slot->dtypes[i]));
  return weighted_sum(values, slot->weights);
}

LossReadback::LossReadback() = default;
LossReadback::~LossReadback() = default;

std::shared_ptr<detail::LossSlot> LossReadback::free_slot(Device device, size_t count) {
  for (auto& slot : slots_) {
    if (slot.use_count() > 1 || slot->device != device || slot->capacity < count) continue;
    if (!slot->waited) slot->copied.synchronize();  // a PendingLoss dropped unread: its copy may run still
    return slot;
  }
  slots_.push_back(std::make_shared<detail::LossSlot>(device, count));
  return slots_.back();
}

PendingLoss LossReadback::read(Context& ctx, const std::vector<Tensor>& losses, const std::vector<double>& weights,
                               TagDescription describe_tag) {
  BATON_CHECK(!losses.empty() && losses.size() == weights.size(), "LossReadback::read: ", losses.size(),
              " loss(es) and ", weights.size(), " weight(s), expected as many of each (at least one)");
  for (const Tensor& loss : losses) {
    BATON_CHECK(loss.numel() == 1 && (loss.dtype() == DType::f32 || loss.dtype() == DType::f64) &&
                    loss.device() == ctx.device(),
                "LossReadback::read: a loss is ", dtype_name(loss.dtype()), " ", loss.shape().str(), " on ",
                loss.device().str(), ", expected an f32 or f64 scalar on ", ctx.device().str());
  }
  if (!ctx.device().is_cuda()) {  // CPU work is done: read it now (CPU checks threw already)
    std::vector<double> values;
    for (const Tensor& loss : losses)
      values.push_back(entry_value(static_cast<const unsigned char*>(loss.data_ptr()), loss.dtype()));
    return PendingLoss(weighted_sum(values, weights));
  }
  std::shared_ptr<detail::LossSlot> slot = free_slot(ctx.device(), losses.size());
  slot->dtypes.clear();
  for (size_t i = 0; i < losses.size(); ++i) {
    copy_bytes(slot->entry(i), Device::cpu(), losses[i].data_ptr(), ctx.device(), losses[i].nbytes(), ctx.stream());
    slot->dtypes.push_back(losses[i].dtype());
  }
  kernels::copy_deferred_errors_async(ctx, slot->record());
  slot->copied.record(ctx.stream());
  slot->waited = false;
  slot->weights = weights;
  slot->describe_tag = std::move(describe_tag);
  PendingLoss pending;
  pending.slot_ = std::move(slot);
  return pending;
}

}  // namespace baton
