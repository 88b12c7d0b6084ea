// oneDNN primitives behind baton's plain layouts: staging reorders, the workspace plan, the cache.
#include "kernels/cpu/dnnl_call.h"

#include <mutex>
#include <unordered_map>
#include <utility>

#include "runtime/core/cpu_threads.h"
#include "runtime/core/error.h"

namespace baton::kernels::cpu {
namespace {

constexpr size_t kAlignment = 64;
size_t aligned(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

dnnl::memory::desc f32_desc(const dnnl::memory::dims& dims, dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, tag);
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(dnnl_engine());
  return stream;
}

}  // namespace

const dnnl::engine& dnnl_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::primitive_attr dnnl_user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

bool run_dnnl_call(const std::shared_ptr<const DnnlCall>& call, std::initializer_list<const void*> data,
                   const Workspace& workspace) {
  if (call == nullptr) return false;
  std::vector<void*> pointers;
  for (const void* p : data) pointers.push_back(const_cast<void*>(p));  // inputs are only read
  call->run(pointers, call->workspace_bytes() > 0 ? workspace(call->workspace_bytes()) : nullptr);
  return true;
}

dnnl::memory::desc dnnl_plain_f32(const dnnl::memory::dims& dims) {
  static constexpr dnnl::memory::format_tag kPlain[] = {
      dnnl::memory::format_tag::undef, dnnl::memory::format_tag::a,    dnnl::memory::format_tag::ab,
      dnnl::memory::format_tag::abc,   dnnl::memory::format_tag::abcd, dnnl::memory::format_tag::abcde};
  BATON_CHECK(!dims.empty() && dims.size() < std::size(kPlain), "oneDNN: no plain layout of rank ", dims.size());
  return f32_desc(dims, kPlain[dims.size()]);
}

dnnl::memory::desc dnnl_any_f32(const dnnl::memory::dims& dims) {
  return f32_desc(dims, dnnl::memory::format_tag::any);
}

DnnlCall::DnnlCall(dnnl::primitive primitive, const dnnl::memory::desc& scratchpad, std::vector<DnnlArgument> arguments)
    : primitive_(std::move(primitive)), scratchpad_(scratchpad) {
  size_t offset = 0;
  for (DnnlArgument& argument : arguments) {
    Staged staged;
    staged.argument = std::move(argument);
    const DnnlArgument& a = staged.argument;
    staged.reordered = a.role == DnnlRole::accumulate || a.user != a.inner;
    if (staged.reordered) {
      staged.offset = offset;
      offset += aligned(a.inner.get_size());
      const dnnl::engine& engine = dnnl_engine();
      if (a.role == DnnlRole::input) {
        staged.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine, a.user, engine, a.inner));
      } else {
        dnnl::primitive_attr attr;
        if (a.role == DnnlRole::accumulate) {
          dnnl::post_ops sum;
          sum.append_sum(1.0f);
          attr.set_post_ops(sum);
        }
        staged.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine, a.inner, engine, a.user, attr));
      }
    }
    staged_.push_back(std::move(staged));
  }
  scratchpad_offset_ = offset;
  workspace_bytes_ = offset + aligned(scratchpad_.get_size());
}

void DnnlCall::run(std::span<void* const> data, void* workspace) const {
  BATON_CHECK(data.size() == staged_.size(), "oneDNN call: ", data.size(), " tensors for ", staged_.size(),
              " arguments");
  (void)cpu_threads();  // the calling thread's OpenMP thread count follows BATON_NUM_THREADS
  const dnnl::engine& engine = dnnl_engine();
  dnnl::stream& stream = thread_stream();
  char* base = static_cast<char*>(workspace);
  std::unordered_map<int, dnnl::memory> args;
  std::vector<std::pair<const Staged*, dnnl::memory>> outputs;
  for (size_t i = 0; i < staged_.size(); ++i) {
    const Staged& s = staged_[i];
    dnnl::memory user(s.argument.user, engine, data[i]);
    if (!s.reordered) {
      args.emplace(s.argument.id, user);
      continue;
    }
    dnnl::memory inner(s.argument.inner, engine, base + s.offset);
    if (s.argument.role == DnnlRole::input) {
      s.reorder.execute(stream, user, inner);
    } else {
      outputs.emplace_back(&s, user);
    }
    args.emplace(s.argument.id, inner);
  }
  if (scratchpad_.get_size() > 0) {
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad_, engine, base + scratchpad_offset_));
  }
  try {
    primitive_.execute(stream, args);
    for (auto& [s, user] : outputs) s->reorder.execute(stream, args.at(s->argument.id), user);
    stream.wait();
  } catch (const dnnl::error& e) {
    BATON_CHECK(false, "oneDNN: ", e.what());
  }
}

namespace {

struct CallCache {
  std::mutex mutex;
  // By the OpenMP thread count the primitive was made for, then by the op's key.
  std::unordered_map<int, std::unordered_map<std::string, std::shared_ptr<const DnnlCall>>> calls;
};

CallCache& call_cache() {
  static CallCache cache;
  return cache;
}

}  // namespace

std::shared_ptr<const DnnlCall> cached_dnnl_call(const std::string& op_key,
                                                 const std::function<std::shared_ptr<const DnnlCall>()>& make) {
  // A primitive runs with the OpenMP thread count it was made with, so calls are cached per count:
  // a pipeline stage worker with one thread must not run a primitive made for every core.
  const int threads = cpu_threads();
  CallCache& cache = call_cache();
  {
    std::lock_guard lock(cache.mutex);
    const auto& calls = cache.calls[threads];
    if (const auto it = calls.find(op_key); it != calls.end()) return it->second;
  }
  // Made outside the lock (primitive creation takes milliseconds); a race makes it twice, keeps one.
  std::shared_ptr<const DnnlCall> call = make();
  std::lock_guard lock(cache.mutex);
  return cache.calls[threads].emplace(op_key, std::move(call)).first->second;
}

DnnlCacheStats dnnl_call_cache_stats() {
  CallCache& cache = call_cache();
  std::lock_guard lock(cache.mutex);
  DnnlCacheStats stats;
  for (const auto& [threads, calls] : cache.calls) {
    for (const auto& [key, call] : calls) ++(call ? stats.calls : stats.unimplemented);
  }
  return stats;
}

}  // namespace baton::kernels::cpu
