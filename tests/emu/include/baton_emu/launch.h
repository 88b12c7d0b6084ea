// Kernel launches of the emulated GPU: the launch rewriter turns `kernel<<<grid, block, shared,
// stream>>>(args)` into a call of baton_emu::launch, which checks the launch as the CUDA runtime does
// (current device, limits, pointer arguments) and runs the grid through the SIMT scheduler.
#pragma once

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "baton_emu/driver_types.h"
#include "baton_emu/vector_types.h"

namespace baton_emu {

struct LaunchConfig {
  dim3 grid;
  dim3 block;
  size_t shared_bytes = 0;
  cudaStream_t stream = nullptr;
  LaunchConfig(dim3 g, dim3 b, size_t shared = 0, cudaStream_t s = nullptr)
      : grid(g), block(b), shared_bytes(shared), stream(s) {}
};

// Type-erased body of one CUDA thread.
struct ThreadBody {
  void (*run)(void*);
  void* context;
};

// One launch in progress: holds the device execution lock from construction to destruction, and
// the launch site for messages. ok() is false when the launch was refused (the CUDA error is then
// the thread's last error, as cudaGetLastError reports it).
class Launch {
 public:
  Launch(const char* kernel, const char* file, int line, const LaunchConfig& config);
  ~Launch();
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;
  bool ok() const { return ok_; }
  // A pointer argument must be null, inside a live allocation the stream's device may access, or
  // inside pinned host memory; anything else aborts naming the kernel and the argument.
  void check_pointer_argument(const void* pointer, int index);
  void run(ThreadBody body);

 private:
  std::string site_;  // "kernel <name> launched at <file>:<line>"
  LaunchConfig config_;
  void* stream_ = nullptr;  // the runtime's state of the launch's stream
  bool ok_ = false;
};

template <typename Kernel, typename... Args>
void launch(const char* kernel_name, const char* file, int line, const LaunchConfig& config, Kernel&& kernel,
            Args&&... args) {
  Launch launch(kernel_name, file, line, config);
  if (!launch.ok()) return;
  // Arguments are evaluated once on the host, as CUDA does; each thread gets its own copies.
  std::tuple<std::decay_t<Args>...> params(std::forward<Args>(args)...);
  [&]<size_t... I>(std::index_sequence<I...>) {
    auto check = [&](const auto& argument, int index) {
      if constexpr (std::is_pointer_v<std::decay_t<decltype(argument)>>) {
        launch.check_pointer_argument((const void*)argument, index);
      }
    };
    (check(std::get<I>(params), static_cast<int>(I)), ...);
    (void)check;
  }
  (std::index_sequence_for<Args...>{});
  auto thread = [&] {
    auto copies = params;
    std::apply(kernel, copies);
  };
  using Thread = decltype(thread);
  launch.run(ThreadBody{[](void* p) { (*static_cast<Thread*>(p))(); }, &thread});
}

}  // namespace baton_emu
