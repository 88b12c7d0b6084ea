// Reading a training run's JSON-lines metrics log in tests: the logged training losses in order.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace baton::testing {

// The "loss" of every {"type": "train"} line of `metrics`, in order.
inline std::vector<double> train_losses(const std::filesystem::path& metrics) {
  std::vector<double> losses;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j["type"] == "train") losses.push_back(j["loss"].get<double>());
  }
  return losses;
}

}  // namespace baton::testing
