// share_profile, share_plan and measure_process_link (see parallel_training.h): what the processes
// of a pipeline across processes measure and agree on before planning.
#include <algorithm>
#include <array>
#include <chrono>

#include "parallel/parallel_training.h"

namespace baton::parallel {

namespace {

// Rank 0's text on every rank.
std::string shared_text(comm::Communicator& world, const std::string& mine) {
  const Stream host = Stream::create(Device::cpu());
  Tensor length = Tensor::empty_host({1}, DType::i64);
  length.data<int64_t>()[0] = static_cast<int64_t>(mine.size());
  world.broadcast(length, 0, host)->wait();
  Tensor bytes = Tensor::empty_host({length.data<int64_t>()[0]}, DType::u8);
  if (world.rank() == 0) std::copy(mine.begin(), mine.end(), bytes.data<uint8_t>());
  world.broadcast(bytes, 0, host)->wait();
  const auto* data = reinterpret_cast<const char*>(bytes.data<uint8_t>());
  return {data, data + bytes.numel()};
}

// Median microseconds of one way of a ping-pong of `bytes` between ranks 0 and 1.
double one_way_us(comm::Communicator& world, int64_t bytes, const Stream& host) {
  const int peer = 1 - world.rank();
  Tensor buffer = Tensor::empty_host({bytes}, DType::u8);
  std::fill_n(buffer.data<uint8_t>(), bytes, uint8_t{1});
  std::vector<double> trips;
  for (int k = 0; k < 18; ++k) {
    const auto start = std::chrono::steady_clock::now();
    if (world.rank() == 0) {
      world.send(buffer, peer, host)->wait();
      world.recv(buffer, peer, host)->wait();
    } else {
      world.recv(buffer, peer, host)->wait();
      world.send(buffer, peer, host)->wait();
    }
    const std::chrono::duration<double, std::micro> trip = std::chrono::steady_clock::now() - start;
    if (k >= 3) trips.push_back(trip.count());
  }
  std::nth_element(trips.begin(), trips.begin() + static_cast<std::ptrdiff_t>(trips.size() / 2), trips.end());
  return trips[trips.size() / 2] / 2;
}

}  // namespace

Link fit_process_link(double small_us, double large_us) {
  constexpr std::array<int64_t, 2> kBytes = kLinkProbeBytes;
  // The slope between the two sizes, unless the large message took hardly longer than the small one
  // (processes time-slicing more processes than cores delay either at random): then the large one's
  // whole time, a bandwidth that is low rather than absurd (a slope over 0.001 us gave 983040 GB/s).
  const bool sloped = large_us - small_us > 0.1 * large_us;
  const double bytes_per_us = sloped ? static_cast<double>(kBytes[1] - kBytes[0]) / (large_us - small_us)
                                     : static_cast<double>(kBytes[1]) / std::max(large_us, 1e-3);
  const double latency_us = std::max(0.0, small_us - static_cast<double>(kBytes[0]) / bytes_per_us);
  return {"mpi", bytes_per_us / 1e3, latency_us};  // bytes per us are MB/s
}

Link measure_process_link(comm::Communicator& world) {
  if (world.size() < 2) return {};
  const Stream host = Stream::create(Device::cpu());
  Tensor fit = Tensor::empty_host({2}, DType::f64);  // bandwidth GB/s, latency us
  if (world.rank() < 2) {
    const Link link =
        fit_process_link(one_way_us(world, kLinkProbeBytes[0], host), one_way_us(world, kLinkProbeBytes[1], host));
    fit.data<double>()[0] = link.bandwidth_gbs;
    fit.data<double>()[1] = link.latency_us;
  }
  world.broadcast(fit, 0, host)->wait();
  return {"mpi", fit.data<double>()[0], fit.data<double>()[1]};
}

Profile share_profile(comm::Communicator& world, const Profile& mine) {
  const nlohmann::json json =
      nlohmann::json::parse(shared_text(world, world.rank() == 0 ? profile_to_json(mine).dump() : std::string()));
  return world.rank() == 0 ? mine : profile_from_json(json, "the profile measured by rank 0");
}

void share_plan(comm::Communicator& world, Profile& profile, EvaluatedPlan& planned) {
  const bool root = world.rank() == 0;
  const nlohmann::json both = nlohmann::json::parse(shared_text(
      world,
      root ? nlohmann::json{{"profile", profile_to_json(profile)}, {"plan", plan_to_json(planned.plan, profile)}}.dump()
           : std::string()));
  if (root) return;
  profile = profile_from_json(both.at("profile"), "the profile measured by rank 0");
  Plan plan = plan_from_json(both.at("plan"), profile, "the plan of rank 0");
  planned.schedule = plan_schedule(plan, profile, planned.choice.schedule);
  planned.plan = std::move(plan);
}

}  // namespace baton::parallel
