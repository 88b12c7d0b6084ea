// What the emulated libraries (cuBLAS, cuDNN, NCCL in tests/emu/libraries/) need from the emulated
// CUDA runtime (tests/emu/runtime/): the calling thread's device, the device of a stream, and
// stream-ordered execution of a library call's work with its memory accesses checked by the same
// rules as a kernel launch. Only EMU builds compile this; baton's own code never includes it.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

typedef struct CUstream_st* cudaStream_t;

namespace baton_emu {

// The calling thread's current device (what cudaGetDevice answers: 0 when the thread never set one).
int current_device();

// The device `stream` belongs to; nullptr (the legacy default stream) belongs to the calling
// thread's current device. An unknown or destroyed stream is a fatal error naming `api`.
int stream_device(cudaStream_t stream, const char* api);

// One range of memory a library call reads or writes, named for messages ("A", "workspace").
struct Access {
  const void* data = nullptr;
  size_t bytes = 0;
  const char* what = "";
  bool writes = false;
};

// Runs `work` as one operation on `stream`, in stream order, after the checks a kernel launch on
// that stream gets: the stream's device is the current device, and each access lies inside one live
// allocation that the stream's device may use (its own device memory, another device's memory it
// was granted access to, or pinned host memory) and is ordered after that allocation's last use on
// other streams. A violated rule is a fatal error naming `api` and the access; never a hang.
void run_on_stream(cudaStream_t stream, const char* api, std::initializer_list<Access> accesses,
                   const std::function<void()>& work);

// The lock of the emulated runtime (recursive): every runtime call and all device work hold it. The
// emulated NCCL keeps its state under it too.
std::recursive_mutex& runtime_lock();

// Stream work that completes after it was enqueued: a collective waits for its peers. Work enqueued
// later on the stream (or on a stream ordered after it by an event) blocks the calling host thread
// until it is done; queries answer cudaErrorNotReady meanwhile; synchronisations wait for it. Every
// field is guarded by runtime_lock().
struct PendingWork {
  bool done = false;
  bool failed = false;
  // What it waits for, for the "would hang" message ("all_reduce #3 of communicator 1 (2 ranks) is
  // waiting for rank 1").
  std::function<std::string()> describe;
};
using PendingWorkHandle = std::shared_ptr<PendingWork>;

// Called with runtime_lock() held once by the calling thread. Blocks, with the lock released, until
// every pending work that `stream` is ordered after has completed. Past BATON_EMU_HANG_SECONDS it is a
// fatal error "<api>: would hang: <what the work waits for>".
void wait_for_stream(cudaStream_t stream, const char* api);
// Starts one operation on `stream` that completes later (complete_pending), with run_on_stream's
// access checks; the stream must belong to `device` (not necessarily the current device). It does
// not wait for earlier pending work of the stream (wait_for_stream does). Caller holds runtime_lock().
PendingWorkHandle enqueue_pending(cudaStream_t stream, int device, const char* api,
                                  const std::vector<Access>& accesses);
// Marks `work` done (or failed) and wakes every waiting thread. Caller holds runtime_lock().
void complete_pending(PendingWork& work, bool failed);
// Wakes every thread blocked in wait_until (something it waits for may have happened).
void notify_progress();
// Blocks, with runtime_lock() (held once by the caller) released, until `ready()`; past
// BATON_EMU_HANG_SECONDS a fatal error "<api>: would hang: <why()>".
void wait_until(const std::function<bool()>& ready, const std::function<std::string()>& why, const char* api);
// Runs `work` with device memory open to the calling thread (as device work runs).
void with_device_memory_open(const std::function<void()>& work);
// Marks the whole allocation [data, data + bytes) as a library's own (a cuBLAS workspace) or gives it
// back (`owned` false): kernels, copies and host code may not touch it (any access faults, naming the
// allocation), and device work does not open it. Memory that is not exactly one live allocation is
// left as it is. Takes runtime_lock().
void set_library_owned(const void* data, size_t bytes, bool owned);

// Prints "baton_emu: <message>" to stderr and aborts: the emulator's answer to a use of CUDA that
// is undefined behaviour on a real GPU (a CUDA error code is returned instead where CUDA returns one).
[[noreturn]] void fatal(const std::string& message);

}  // namespace baton_emu
