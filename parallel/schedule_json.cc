// Schedules as JSON ("baton.schedule/1"): one object per instruction, one list per position.
#include <array>

#include "parallel/schedule.h"
#include "runtime/core/error.h"
#include "runtime/graph/json_config.h"

namespace baton::parallel {
namespace {

constexpr std::string_view kFormat = "baton.schedule/1";
constexpr std::array<Op, 8> kOps = {Op::forward,       Op::backward,      Op::send_activation, Op::recv_activation,
                                    Op::send_gradient, Op::recv_gradient, Op::all_reduce,      Op::optimizer_step};

bool has_micro_batch(Op op) { return op != Op::all_reduce && op != Op::optimizer_step; }
bool has_peer(Op op) {
  return op == Op::send_activation || op == Op::recv_activation || op == Op::send_gradient || op == Op::recv_gradient;
}

int get_int_field(const JsonConfig& config, std::string_view what, std::string_view field, int low) {
  const int64_t value = config.get_int(field);
  BATON_CHECK(value >= low && value <= 1'000'000'000, what, ": field '", field, "' is ", value,
              ", expected an integer >= ", low);
  return static_cast<int>(value);
}

Instruction instruction_from_json(const nlohmann::json& json, const std::string& what) {
  const JsonConfig config(json, what, {"op", "stage", "micro_batch", "peer"});
  BATON_CHECK(config.has("op"), what, ": missing required field 'op'");
  const std::string name = config.get_string("op", "");
  Instruction ins;
  bool known = false;
  std::string names;
  for (Op op : kOps) {
    (names += names.empty() ? "" : ", ") += op_name(op);
    if (op_name(op) == name) {
      ins.op = op;
      known = true;
    }
  }
  BATON_CHECK(known, what, ": unknown op '", name, "'; expected one of: ", names);
  ins.stage = get_int_field(config, what, "stage", 0);
  if (has_micro_batch(ins.op)) {
    ins.micro_batch = get_int_field(config, what, "micro_batch", 0);
  } else {
    BATON_CHECK(!config.has("micro_batch"), what, ": field 'micro_batch' does not apply to ", name);
  }
  if (has_peer(ins.op)) {
    ins.peer = get_int_field(config, what, "peer", 0);
  } else {
    BATON_CHECK(!config.has("peer"), what, ": field 'peer' does not apply to ", name);
  }
  return ins;
}

}  // namespace

nlohmann::json schedule_to_json(const Schedule& schedule) {
  nlohmann::json programs = nlohmann::json::array();
  for (const auto& program : schedule.programs) {
    nlohmann::json list = nlohmann::json::array();
    for (const Instruction& ins : program) {
      nlohmann::json item = {{"op", std::string(op_name(ins.op))}, {"stage", ins.stage}};
      if (has_micro_batch(ins.op)) item["micro_batch"] = ins.micro_batch;
      if (has_peer(ins.op)) item["peer"] = ins.peer;
      list.push_back(std::move(item));
    }
    programs.push_back(std::move(list));
  }
  return {{"format", std::string(kFormat)},
          {"kind", std::string(schedule_kind_name(schedule.kind))},
          {"devices", schedule.devices},
          {"stages", schedule.stages},
          {"micro_batches", schedule.micro_batches},
          {"programs", std::move(programs)}};
}

Schedule schedule_from_json(const nlohmann::json& json, std::string_view source) {
  const std::string what = std::string(source) + ": schedule";
  const JsonConfig config(json, what, {"format", "kind", "devices", "stages", "micro_batches", "programs"});
  for (std::string_view field : {"format", "kind", "devices", "stages", "micro_batches", "programs"}) {
    BATON_CHECK(config.has(field), what, ": missing required field '", field, "'");
  }
  const std::string format = config.get_string("format", "");
  BATON_CHECK(format == kFormat, what, ": field 'format' is '", format, "', expected '", kFormat, "'");
  const std::string kind = config.get_string("kind", "");
  Schedule schedule;
  try {
    schedule.kind = parse_schedule_kind(kind);
  } catch (const Error& e) {
    BATON_FAIL(what, ": field 'kind': ", e.message());
  }
  schedule.devices = get_int_field(config, what, "devices", 1);
  schedule.stages = get_int_field(config, what, "stages", 1);
  schedule.micro_batches = get_int_field(config, what, "micro_batches", 1);
  BATON_CHECK(schedule.stages % schedule.devices == 0, what, ": field 'stages' is ", schedule.stages,
              ", expected a multiple of devices (", schedule.devices, ")");

  const nlohmann::json& programs = json.at("programs");
  BATON_CHECK(programs.is_array() && static_cast<int>(programs.size()) == schedule.devices, what,
              ": field 'programs' must be a list of ", schedule.devices, " instruction lists (one per device), got ",
              programs.is_array() ? detail::concat(programs.size(), " lists") : std::string(programs.type_name()));
  for (size_t p = 0; p < programs.size(); ++p) {
    std::string where = what;
    ((where += ": programs[") += std::to_string(p)) += "]";
    BATON_CHECK(programs[p].is_array(), where, ": expected a list of instructions, got ", programs[p].type_name());
    std::vector<Instruction> program;
    for (size_t i = 0; i < programs[p].size(); ++i) {
      std::string item = where;
      ((item += "[") += std::to_string(i)) += "]";
      program.push_back(instruction_from_json(programs[p][i], item));
    }
    schedule.programs.push_back(std::move(program));
  }
  return schedule;
}

}  // namespace baton::parallel
