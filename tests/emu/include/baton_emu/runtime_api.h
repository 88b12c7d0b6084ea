// What the emulated libraries (cuBLAS, cuDNN, NCCL in tests/emu/libraries/) need from the emulated
// CUDA runtime (tests/emu/runtime/): the calling thread's device, the device of a stream, and
// stream-ordered execution of a library call's work with its memory accesses checked by the same
// rules as a kernel launch. Only EMU builds compile this; baton's own code never includes it.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>

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

// Prints "baton_emu: <message>" to stderr and aborts: the emulator's answer to a use of CUDA that
// is undefined behaviour on a real GPU (a CUDA error code is returned instead where CUDA returns one).
[[noreturn]] void fatal(const std::string& message);

}  // namespace baton_emu
