// Schedules as JSON ("baton.schedule/1"): one object per instruction, one list per position.
#include <array>

#include "parallel/plan/schedule.h"
#include "runtime/core/error.h"
#include "runtime/graph/json_fields.h"

namespace baton::parallel {
namespace {

constexpr std::string_view kFormat = "baton.schedule/1";
constexpr std::array<Op, 8> kOps = {Op::forward,       Op::backward,      Op::send_activation, Op::recv_activation,
                                    Op::send_gradient, Op::recv_gradient, Op::all_reduce,      Op::optimizer_step};

bool has_micro_batch(Op op) { return op != Op::all_reduce && op != Op::optimizer_step; }
bool has_peer(Op op) {
  return op == Op::send_activation || op == Op::recv_activation || op == Op::send_gradient || op == Op::recv_gradient;
}

int get_int_field(const JsonFields& fields, std::string_view key, int low) {
  const int64_t value = fields.integer(key);
  if (value < low || value > 1'000'000'000)
    fields.fail(key, detail::concat("an integer >= ", low, " (found ", value, ")"));
  return static_cast<int>(value);
}

Instruction instruction_from_json(const JsonFields& fields) {
  fields.allow_only({"op", "stage", "micro_batch", "peer"});
  const std::string name = fields.string("op");
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
  if (!known) fields.fail("op", detail::concat("one of: ", names, " (found '", name, "')"));
  ins.stage = get_int_field(fields, "stage", 0);
  if (has_micro_batch(ins.op)) {
    ins.micro_batch = get_int_field(fields, "micro_batch", 0);
  } else if (fields.has("micro_batch")) {
    fields.fail("micro_batch", detail::concat("no micro_batch: ", name, " acts on the whole stage"));
  }
  if (has_peer(ins.op)) {
    ins.peer = get_int_field(fields, "peer", 0);
  } else if (fields.has("peer")) {
    fields.fail("peer", detail::concat("no peer: only sends and receives have one, not ", name));
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
  nlohmann::json json = {{"format", std::string(kFormat)},
                         {"kind", std::string(schedule_kind_name(schedule.kind))},
                         {"devices", schedule.devices},
                         {"stages", schedule.stages},
                         {"micro_batches", schedule.micro_batches},
                         {"programs", std::move(programs)}};
  if (schedule.forward_only) json["forward_only"] = true;  // training schedules leave it out
  if (schedule.replicated()) json["replicas"] = schedule.replicas;
  return json;
}

Schedule schedule_from_json(const nlohmann::json& json, std::string_view source) {
  const JsonFields fields(json, source, "");
  fields.allow_only({"format", "kind", "devices", "stages", "micro_batches", "forward_only", "replicas", "programs"});
  const std::string format = fields.string("format");
  if (format != kFormat) fields.fail("format", detail::concat("'", kFormat, "' (found '", format, "')"));
  Schedule schedule;
  const std::string kind = fields.string("kind");
  try {
    schedule.kind = parse_schedule_kind(kind);
  } catch (const Error&) {
    fields.fail("kind", detail::concat("gpipe, 1f1b or interleaved (found '", kind, "')"));
  }
  schedule.devices = get_int_field(fields, "devices", 1);
  schedule.stages = get_int_field(fields, "stages", 1);
  schedule.micro_batches = get_int_field(fields, "micro_batches", 1);
  schedule.forward_only = fields.boolean("forward_only", false);
  if (fields.has("replicas")) schedule.replicas = fields.int32s("replicas");
  if (schedule.stages % schedule.devices != 0) {
    fields.fail("stages", detail::concat("a multiple of devices (", schedule.devices, "), found ", schedule.stages));
  }

  const nlohmann::json& programs = fields.at("programs");
  if (!programs.is_array() || static_cast<int>(programs.size()) != schedule.devices) {
    fields.fail(
        "programs",
        detail::concat("one instruction list per device (", schedule.devices, "), found ",
                       programs.is_array() ? detail::concat(programs.size(), programs.size() == 1 ? " list" : " lists")
                                           : std::string(programs.type_name())));
  }
  for (size_t p = 0; p < programs.size(); ++p) {
    const std::string where = detail::concat("programs[", p, "]");
    if (!programs[p].is_array())
      fields.fail(where, detail::concat("a list of instructions, found ", programs[p].type_name()));
    std::vector<Instruction> program;
    for (size_t i = 0; i < programs[p].size(); ++i) {
      program.push_back(instruction_from_json(JsonFields(programs[p][i], source, detail::concat(where, "[", i, "]"))));
    }
    schedule.programs.push_back(std::move(program));
  }
  return schedule;
}

}  // namespace baton::parallel
