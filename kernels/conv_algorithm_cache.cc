// The convolution algorithm cache: a map under a mutex, with hit and miss counts.
#include "kernels/conv_algorithm_cache.h"

#include <map>
#include <mutex>
#include <utility>

#include "kernels/conv.h"

namespace baton::kernels {
namespace {

struct Cache {
  std::mutex mutex;
  std::map<ConvAlgorithmKey, CachedConvAlgorithm> entries;
  int64_t hits = 0, misses = 0;
};

Cache& cache() {
  static Cache instance;
  return instance;
}

std::array<int64_t, 4> dims4(const Shape& s) { return {s[0], s[1], s[2], s[3]}; }

}  // namespace

ConvAlgorithmKey conv_algorithm_key(const Context& ctx, Conv2dPass pass, const Shape& x, const Shape& w,
                                    const Conv2dParams& params, DType dtype) {
  return {.pass = pass,
          .dtype = dtype,
          .device = ctx.device().index(),
          .x = dims4(x),
          .w = dims4(w),
          .params = {params.stride[0], params.stride[1], params.padding[0], params.padding[1], params.dilation[0],
                     params.dilation[1], params.groups},
          .allow_tf32 = ctx.allow_tf32() && dtype == DType::f32,
          .deterministic = ctx.deterministic(),
          .workspace_limit = ctx.workspace_limit()};
}

std::optional<CachedConvAlgorithm> find_conv_algorithm(const ConvAlgorithmKey& key) {
  Cache& c = cache();
  const std::lock_guard lock(c.mutex);
  const auto it = c.entries.find(key);
  if (it == c.entries.end()) return std::nullopt;
  return it->second;
}

CachedConvAlgorithm conv_algorithm(const ConvAlgorithmKey& key, const std::function<CachedConvAlgorithm()>& measure) {
  Cache& c = cache();
  {
    const std::lock_guard lock(c.mutex);
    const auto it = c.entries.find(key);
    if (it != c.entries.end()) {
      ++c.hits;
      return it->second;
    }
    ++c.misses;
  }
  CachedConvAlgorithm measured = measure();
  const std::lock_guard lock(c.mutex);
  return c.entries.emplace(key, std::move(measured)).first->second;
}

std::optional<Conv2dAlgorithm> cached_conv2d_algorithm(const Context& ctx, Conv2dPass pass, const Shape& x,
                                                       const Shape& w, const Conv2dParams& params, DType dtype) {
  if (x.rank() != 4 || w.rank() != 4) return std::nullopt;
  const std::optional<CachedConvAlgorithm> entry =
      find_conv_algorithm(conv_algorithm_key(ctx, pass, x, w, params, dtype));
  if (!entry) return std::nullopt;
  return entry->algorithm;
}

Conv2dAlgorithmCacheStats conv2d_algorithm_cache_stats() {
  Cache& c = cache();
  const std::lock_guard lock(c.mutex);
  return {.entries = static_cast<int64_t>(c.entries.size()), .hits = c.hits, .misses = c.misses};
}

void clear_conv2d_algorithm_cache() {
  Cache& c = cache();
  const std::lock_guard lock(c.mutex);
  c.entries.clear();
  c.hits = 0;
  c.misses = 0;
}

}  // namespace baton::kernels
