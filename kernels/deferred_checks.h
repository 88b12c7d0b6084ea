// Deferred checks: failures that CUDA ops detect on the device (labels outside [0, C), see
// kernels/loss.h) are recorded in the Context's device-check buffer without a host synchronisation
// and reported by the host at a synchronisation it makes anyway: an evaluation's read-back, a
// checkpoint, a training step's loss (runtime/train/pending_loss.h).
//
// Each failure is reported once, as the baton::Error the op itself would have thrown; the first
// failure since the last report wins (later ones are not recorded over it). CPU ops check on the
// host and throw at once, so a CPU context never has anything deferred. Context::set_sync_checks
// (or BATON_SYNC_CHECKS=1) makes CUDA ops synchronise and throw from the op instead.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/deferred_check_types.h"
#include "runtime/core/context.h"

namespace baton::kernels {

// Bytes of a context's record, as copied by copy_deferred_errors_async.
inline constexpr size_t kDeferredCheckBytes = Context::kDeviceCheckBytes;

// Synchronises ctx's stream if a check has ever run on it, then throws the failure recorded since the
// last report, if any, and resets the record. Nothing to wait for otherwise (no synchronisation).
void raise_deferred_errors(Context& ctx);

// Issues on ctx's stream a copy of its record into `host` (kDeferredCheckBytes, pinned memory for an
// asynchronous copy) and then the reset of the record: the failures recorded so far are the copy's
// to report. Read `host` with raise_deferred_errors(host) once the copy has completed (an event
// recorded after this call). Writes `host` at once when no check has run on ctx.
void copy_deferred_errors_async(Context& ctx, void* host);

// Throws the failure in a record copied by copy_deferred_errors_async, if any.
void raise_deferred_errors(const void* host);
// The Context::check_tag() under which the failure in such a record was found (-1: none, or no tag).
int64_t deferred_error_tag(const void* host);

// Throws the error `record` describes, if it holds a failure: "<op>: argument 'labels' has N
// value(s) outside [0, C), the first is V at row R". The CPU ops' immediate check throws it too.
void raise_label_check(const LabelCheckRecord& record);

}  // namespace baton::kernels
