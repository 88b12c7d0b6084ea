// `baton bench comm`: all-reduce (sum, f32) from 4 KiB to 256 MiB, baton's communicator beside a
// baseline measured in the same run (raw MPI_Allreduce, raw ncclAllReduce, or plain threads), with
// nccl-tests' algorithm and bus bandwidths. Prints a table, writes JSON. See docs/data-parallel.md.
#include "tools/bench_comm.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "parallel/comm/launch_environment.h"
#include "parallel/comm/mpi_runtime.h"
#include "runtime/core/device_info.h"
#include "runtime/core/error.h"
#include "tools/bench_timer.h"
#include "tools/commands.h"
#include "tools/flag_checks.h"
#include "tools/rank_output.h"

namespace baton::cli {
namespace {

struct CommBenchFlags {
  std::string backend;  // empty: mpi under a launcher with several processes, else inproc
  int ranks = -1;       // not given: 2 threads for inproc, the job's size for mpi
  std::string min_bytes = "4K", max_bytes = "256M";
  int warmup = 3, repeats = 20;
  std::string json_path;
  std::string mpi_reduction;  // empty: BATON_MPI_REDUCTION, else native
};

constexpr int64_t kMiB = int64_t{1} << 20;

// "4096", "4K", "4KiB", "256M", "1G" (powers of 1024) as bytes.
int64_t parse_bytes(const std::string& flag, const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string unit = text.substr(digits);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::toupper(c); });
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  if (unit == "K" || unit == "KB" || unit == "KIB") shift = 10;
  if (unit == "M" || unit == "MB" || unit == "MIB") shift = 20;
  if (unit == "G" || unit == "GB" || unit == "GIB") shift = 30;
  BATON_CHECK(digits > 0 && digits <= 12 && shift >= 0, flag, " '", text,
              "' is not a size: expected bytes, or a number with K, M or G (e.g. 4K, 256M)");
  const int64_t bytes = std::stoll(text.substr(0, digits)) << shift;
  BATON_CHECK(bytes >= 4 && bytes % 4 == 0 && bytes <= (int64_t{8} << 30), flag, " ", text,
              " must be a whole number of f32 elements (a multiple of 4 bytes) from 4 bytes to 8G");
  return bytes;
}

double gbps(int64_t bytes, double seconds) { return static_cast<double>(bytes) / seconds / 1e9; }
// nccl-tests' bus bandwidth of all-reduce: algbw x 2(n - 1)/n, what each link carries.
double bus_gbps(int64_t bytes, double seconds, int ranks) { return gbps(bytes, seconds) * 2.0 * (ranks - 1) / ranks; }

void print_and_write(const CommBenchFlags& f, const CommBenchSettings& s, const std::string& backend,
                     const std::string& baseline, const std::vector<CommBenchRow>& rows) {
  const int n = s.ranks;
  std::printf("%12s %6s | %10s %10s %10s | %10s %10s | %9s\n", "size", "calls", "time us", "algbw GB/s", "busbw GB/s",
              "base us", "base busbw", "% of base");
  const bool gpus = backend == "nccl";
  nlohmann::json report =
      bench_report(gpus ? Device::cuda(0) : Device::cpu(), {.warmup = s.warmup, .repeats = s.repeats});
  report["timing"]["statistic"] = "median per rank, mean over the ranks";
  report["benchmark"] = "comm";
  report["operation"] = "all_reduce";
  report["op"] = "sum";
  report["dtype"] = "f32";
  report["backend"] = backend;
  report["ranks"] = n;
  report["baseline"] = baseline;
  if (backend == "mpi") report["mpi_reduction"] = std::string(comm::mpi_reduction_name(s.reduction));
  const SystemInfo system = query_system_info();
  report["host"] = {{"hardware_threads", std::thread::hardware_concurrency()}, {"cpu", system.cpu.model}};
  if (gpus) {
    report["nccl_version"] = system.nccl_version;
    for (int r = 0; r < n; ++r) report["devices"].push_back(device_display_name(Device::cuda(r)));
  }
  double worst_from_1mib = 0;
  for (const CommBenchRow& r : rows) {
    const double percent = 100.0 * r.baton_s / r.baseline_s;
    if (r.bytes >= kMiB) worst_from_1mib = std::max(worst_from_1mib, percent);
    std::printf("%12s %6d | %10.1f %10.3f %10.3f | %10.1f %10.3f | %8.0f%%\n",
                human_bytes(static_cast<double>(r.bytes)).c_str(), r.calls_per_sample, r.baton_s * 1e6,
                gbps(r.bytes, r.baton_s), bus_gbps(r.bytes, r.baton_s, n), r.baseline_s * 1e6,
                bus_gbps(r.bytes, r.baseline_s, n), percent);
    report["results"].push_back({{"bytes", r.bytes},
                                 {"elements", r.bytes / 4},
                                 {"calls_per_sample", r.calls_per_sample},
                                 {"time_us", r.baton_s * 1e6},
                                 {"algbw_gbs", gbps(r.bytes, r.baton_s)},
                                 {"busbw_gbs", bus_gbps(r.bytes, r.baton_s, n)},
                                 {"baseline_time_us", r.baseline_s * 1e6},
                                 {"baseline_algbw_gbs", gbps(r.bytes, r.baseline_s)},
                                 {"baseline_busbw_gbs", bus_gbps(r.bytes, r.baseline_s, n)},
                                 {"time_percent_of_baseline", percent}});
  }
  const bool any_large = rows.back().bytes >= kMiB;
  if (any_large) {
    std::printf("from 1 MiB, baton's time is at most %.0f%% of the baseline's (%+.0f%%)\n", worst_from_1mib,
                worst_from_1mib - 100);
  }
  report["max_time_percent_of_baseline_from_1mib"] = any_large ? nlohmann::json(worst_from_1mib) : nlohmann::json();
  write_bench_json(f.json_path, report);
}

CommBenchSettings settings_from(const CommBenchFlags& f, int ranks) {
  CommBenchSettings s;
  BATON_CHECK(f.warmup >= 0 && f.repeats >= 1, "--warmup must be >= 0 and --repeats >= 1 (got ", f.warmup, " and ",
              f.repeats, ")");
  s.ranks = ranks;
  s.warmup = f.warmup;
  s.repeats = f.repeats;
  const int64_t lo = parse_bytes("--min-bytes", f.min_bytes), hi = parse_bytes("--max-bytes", f.max_bytes);
  BATON_CHECK(lo <= hi, "--min-bytes ", f.min_bytes, " is larger than --max-bytes ", f.max_bytes);
  for (int64_t b = lo; b <= hi; b *= 2) s.sizes.push_back(b);
  return s;
}

// --backend nccl: the GPUs of this process, one rank each.
void run_nccl(const CommBenchFlags& f, const comm::LaunchEnvironment& launch) {
  BATON_CHECK(launch.size == 1, "--backend nccl runs its ranks as the GPUs of one process, but ", launch.launcher,
              " started ", launch.size, " processes: run it without the launcher");
  BATON_CHECK(f.ranks == -1 || f.ranks >= 2, "--ranks ", f.ranks,
              " with --backend nccl: at least 2 ranks (one per GPU) are needed");
  const SystemInfo info = query_system_info();
  BATON_CHECK(info.built_with_cuda,
              "--backend nccl needs a CUDA build, and baton was built without CUDA (BATON_HAVE_CUDA is 0): configure "
              "with -DBATON_CUDA=ON on a machine with the CUDA toolkit and NCCL (or -DBATON_CUDA=EMU for the emulated "
              "GPU)");
  const auto gpus = static_cast<int>(info.gpus.size());
  BATON_CHECK(gpus >= 2, "--backend nccl needs at least 2 GPUs, and this process sees ", gpus,
              info.cuda_unavailable_reason.empty() ? "" : " (" + info.cuda_unavailable_reason + ")");
  BATON_CHECK(f.ranks <= gpus, "--ranks ", f.ranks, " with --backend nccl: this process sees ", gpus,
              " GPUs (one rank per GPU)");
  const CommBenchSettings s = settings_from(f, f.ranks > 0 ? f.ranks : gpus);
  const auto buffer = static_cast<double>(s.sizes.back());
  for (int r = 0; r < s.ranks; ++r) {
    const auto free = static_cast<double>(info.gpus[static_cast<size_t>(r)].free_memory_bytes);
    BATON_CHECK(free <= 0 || buffer <= free / 2, "--max-bytes ", f.max_bytes, " needs a buffer of ",
                human_bytes(buffer), " on each GPU, more than half of the ", human_bytes(free), " free on cuda:", r,
                ": give a smaller --max-bytes");
  }
  const auto memory = static_cast<double>(info.cpu.memory_bytes);
  BATON_CHECK(memory <= 0 || buffer * s.ranks <= memory / 2, "--ranks ", s.ranks, " host buffers of --max-bytes ",
              f.max_bytes, " need ", human_bytes(buffer * s.ranks), ", more than half of this machine's ",
              human_bytes(memory), ": give a smaller --max-bytes");
  std::printf(
      "all-reduce (sum, f32), %d ranks as the GPUs cuda:0..%d of this process (nccl backend); baseline: "
      "ncclAllReduce of the same buffers, every GPU from one thread in one group\n",
      s.ranks, s.ranks - 1);
  std::fflush(stdout);
  print_and_write(f, s, "nccl", "ncclAllReduce", bench_comm_nccl(s));
}

void run_comm_bench(const CommBenchFlags& f) {
  const comm::LaunchEnvironment launch = comm::launch_environment();
  const std::string backend = !f.backend.empty() ? f.backend : launch.size > 1 ? "mpi" : "inproc";
  BATON_CHECK(backend == "inproc" || backend == "mpi" || backend == "nccl", "--backend '", backend,
              "': expected inproc, mpi or nccl");
  BATON_CHECK(f.ranks == -1 || (f.ranks >= 1 && f.ranks <= 64), "--ranks ", f.ranks, ": expected 1 to 64");
  if (backend == "inproc") {
    BATON_CHECK(launch.size == 1, "--backend inproc runs its ranks as threads of one process, but ", launch.launcher,
                " started ", launch.size, " processes: use --backend mpi, or run it without the launcher");
    const CommBenchSettings s = settings_from(f, f.ranks > 0 ? f.ranks : 2);
    const auto needed = static_cast<double>(s.sizes.back()) * s.ranks;
    const auto memory = static_cast<double>(query_system_info().cpu.memory_bytes);
    BATON_CHECK(memory <= 0 || needed <= memory / 2, "--ranks ", s.ranks, " buffers of --max-bytes ", f.max_bytes,
                " need ", human_bytes(needed), ", more than half of this machine's ", human_bytes(memory),
                ": give a smaller --max-bytes");
    std::printf(
        "all-reduce (sum, f32), %d ranks as threads of this process (inproc backend); baseline: the same "
        "threads summing in shared memory without baton\n",
        s.ranks);
    std::fflush(stdout);
    print_and_write(f, s, backend, "plain threads summing in shared memory", bench_comm_inproc(s));
    return;
  }
  if (backend == "nccl") {
    run_nccl(f, launch);
    return;
  }
  BATON_CHECK(launch.size > 1,
              "--backend mpi needs the processes of an MPI job: run it under mpirun or srun, e.g. "
              "mpirun -np 2 baton bench comm --backend mpi");
  BATON_CHECK(f.ranks == -1 || f.ranks == launch.size, "--ranks ", f.ranks, " with ", launch.size, " processes from ",
              launch.launcher, ": with --backend mpi there is one rank per process");
  CommBenchSettings s = settings_from(f, launch.size);
  BATON_CHECK(f.mpi_reduction.empty() || f.mpi_reduction == "native" || f.mpi_reduction == "rank-order",
              "--mpi-reduction '", f.mpi_reduction, "': expected native or rank-order");
  s.reduction = f.mpi_reduction.empty()       ? comm::mpi_reduction_from_environment()
                : f.mpi_reduction == "native" ? comm::MpiReduction::native
                                              : comm::MpiReduction::rank_order;
  if (launch.rank != 0) quiet_stdout();  // rank 0 prints and writes the JSON
  comm::MpiRuntime runtime;
  try {
    std::printf(
        "all-reduce (sum, f32), %d processes (mpi backend, %s reduction, %s); baseline: MPI_Allreduce of the same "
        "buffer\n",
        s.ranks, std::string(comm::mpi_reduction_name(s.reduction)).c_str(),
        std::string(runtime.thread_level()).c_str());
    std::fflush(stdout);
    const std::vector<CommBenchRow> rows = bench_comm_mpi(s, runtime);
    if (launch.rank == 0) print_and_write(f, s, backend, "MPI_Allreduce", rows);
  } catch (const std::exception& e) {
    runtime.abort(std::string("error: ") + e.what());
  }
}

}  // namespace

void add_bench_comm_command(CLI::App& bench) {
  auto f = std::make_shared<CommBenchFlags>();
  CLI::App* cmd = bench.add_subcommand(
      "comm", "All-reduce (sum, f32) by size: time, algorithm and bus bandwidth, baton beside a baseline");
  cmd->add_option("--backend", f->backend,
                  "inproc (threads of this process), mpi (under mpirun/srun) or nccl (the GPUs of this process); "
                  "default: mpi when launched with several processes, else inproc");
  cmd->add_option("--ranks", f->ranks,
                  "Ranks (inproc: threads, default 2; mpi: the job's processes; nccl: GPUs cuda:0..N-1, default all)")
      ->check(whole_number(0));  // the backends check the upper bound
  cmd->add_option("--min-bytes", f->min_bytes, "Smallest message, e.g. 4K (default 4K)");
  cmd->add_option("--max-bytes", f->max_bytes, "Largest message, sizes doubling up to it (default 256M)");
  cmd->add_option("--warmup", f->warmup, "Untimed samples per size (default 3)");
  cmd->add_option("--repeats", f->repeats, "Timed samples per size, the median kept (default 20)");
  cmd->add_option("--mpi-reduction", f->mpi_reduction,
                  "mpi backend: native (MPI_Allreduce, the default) or rank-order (bitwise the inproc result)");
  cmd->add_option("--json", f->json_path, "Also write every figure as JSON to this file (atomically; rank 0)");
  cmd->callback([f] { run_comm_bench(*f); });
}

}  // namespace baton::cli
