// share_profile and share_plan (see parallel_training.h): rank 0's measured profile and plan on
// every process of a pipeline across processes.
#include <algorithm>

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

}  // namespace

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
