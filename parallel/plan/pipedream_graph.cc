// Reading PipeDream's graph.txt profiles (pipedream_profile.cc converts them to and from baton Profiles).
#include "parallel/plan/pipedream_graph.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <queue>
#include <sstream>
#include <tuple>

#include "runtime/core/error.h"
#include "runtime/core/regular_file.h"

namespace baton::parallel {
namespace {

constexpr std::string_view kSeparator = " -- ";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, std::string_view separator) {
  std::vector<std::string_view> parts;
  for (size_t at = s.find(separator); at != std::string_view::npos; at = s.find(separator)) {
    parts.push_back(s.substr(0, at));
    s.remove_prefix(at + separator.size());
  }
  parts.push_back(s);
  return parts;
}

// One line of the file, for error messages.
struct Line {
  std::string_view source;
  int number;
  std::string where() const { return std::string(source) + ":" + std::to_string(number); }
};

double parse_number(std::string_view text, const Line& line, std::string_view field) {
  const std::string s(trim(text));
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  BATON_CHECK(!s.empty() && end == s.c_str() + s.size() && errno == 0 && std::isfinite(v) && v >= 0, line.where(),
              ": field '", field, "': expected a finite number >= 0, got '", s, "'");
  return v;
}

// "name=value": the value, after checking the name.
std::string_view field_value(std::string_view item, std::string_view name, const Line& line) {
  item = trim(item);
  const size_t eq = item.find('=');
  BATON_CHECK(eq != std::string_view::npos && item.substr(0, eq) == name, line.where(), ": expected '", name,
              "=<number>', got '", item, "'");
  return item.substr(eq + 1);
}

PipeDreamNode parse_node(std::string_view text, const Line& line) {
  const std::vector<std::string_view> parts = split(text, kSeparator);
  BATON_CHECK(parts.size() == 3 || parts.size() == 4, line.where(),
              ": expected a node line 'id -- description -- forward_compute_time=..., backward_compute_time=..., "
              "activation_size=..., parameter_size=...' or an edge line '<tab>id -- id'");
  PipeDreamNode node;
  node.id = std::string(trim(parts[0]));
  node.description = std::string(trim(parts[1]));
  BATON_CHECK(!node.id.empty(), line.where(), ": empty node id");
  const std::vector<std::string_view> fields = split(parts[2], ", ");
  BATON_CHECK(
      fields.size() == 4, line.where(),
      ": expected 4 fields 'forward_compute_time, backward_compute_time, activation_size, parameter_size', got ",
      fields.size());
  node.forward_ms = parse_number(field_value(fields[0], "forward_compute_time", line), line, "forward_compute_time");
  node.backward_ms = parse_number(field_value(fields[1], "backward_compute_time", line), line, "backward_compute_time");
  std::string_view activation = trim(field_value(fields[2], "activation_size", line));
  if (!activation.empty() && activation.front() == '[') {  // several outputs: "[a; b]", summed
    BATON_CHECK(activation.back() == ']', line.where(), ": field 'activation_size': expected '[a; b; ...]'");
    for (std::string_view part : split(activation.substr(1, activation.size() - 2), "; ")) {
      node.activation_bytes += parse_number(part, line, "activation_size");
    }
  } else {
    node.activation_bytes = parse_number(activation, line, "activation_size");
  }
  node.parameter_bytes = parse_number(field_value(fields[3], "parameter_size", line), line, "parameter_size");
  return node;
}

// The number in an id such as "node12" (-1 without one): the order of ties in the topological sort.
long id_number(const std::string& id) {
  size_t digits = id.size();
  while (digits > 0 && id[digits - 1] >= '0' && id[digits - 1] <= '9') --digits;
  return digits == id.size() ? -1 : std::strtol(id.c_str() + digits, nullptr, 10);
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

}  // namespace

PipeDreamGraph parse_pipedream_graph(std::string_view text, std::string_view source) {
  std::vector<PipeDreamNode> all;
  std::map<std::string, int, std::less<>> index_of;
  std::vector<std::pair<int, int>> edges;
  int number = 0;
  for (std::string_view rest = text; !rest.empty();) {
    const size_t end = rest.find('\n');
    const std::string_view raw = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    const Line line{source, ++number};
    if (trim(raw).empty()) continue;
    if (raw.front() != '\t') {
      PipeDreamNode node = parse_node(raw, line);
      BATON_CHECK(index_of.emplace(node.id, static_cast<int>(all.size())).second, line.where(), ": node '", node.id,
                  "' appears twice");
      all.push_back(std::move(node));
      continue;
    }
    const std::vector<std::string_view> ends = split(trim(raw), kSeparator);
    BATON_CHECK(ends.size() == 2, line.where(), ": expected an edge '<tab>id -- id'");
    int at[2];
    for (int e = 0; e < 2; ++e) {
      const auto found = index_of.find(trim(ends[e]));
      BATON_CHECK(found != index_of.end(), line.where(), ": edge names node '", trim(ends[e]),
                  "', which no earlier line defines");
      at[e] = found->second;
    }
    edges.emplace_back(at[0], at[1]);
  }
  BATON_CHECK(!all.empty(), source, ": no node lines (expected PipeDream's graph.txt)");

  // The optimiser's view: without `Input` sources and `__getitem__` sinks.
  std::vector<int> producers_count(all.size(), 0), consumers_count(all.size(), 0);
  for (const auto& [from, to] : edges) {
    ++consumers_count[static_cast<size_t>(from)];
    ++producers_count[static_cast<size_t>(to)];
  }
  std::vector<bool> dropped(all.size(), false), input(all.size(), false);
  for (size_t n = 0; n < all.size(); ++n) {
    input[n] = producers_count[n] == 0 && starts_with(all[n].description, "Input");
    dropped[n] = input[n] || (consumers_count[n] == 0 && starts_with(all[n].description, "__getitem__"));
  }
  // Kahn's algorithm over the kept nodes, smallest (id number, id) first.
  std::vector<std::vector<int>> out(all.size());
  std::vector<int> waiting(all.size(), 0);
  for (const auto& [from, to] : edges) {
    if (dropped[static_cast<size_t>(from)] || dropped[static_cast<size_t>(to)]) continue;
    out[static_cast<size_t>(from)].push_back(to);
    ++waiting[static_cast<size_t>(to)];
  }
  using Key = std::tuple<long, std::string, int>;
  std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
  for (size_t n = 0; n < all.size(); ++n) {
    if (!dropped[n] && waiting[n] == 0) ready.emplace(id_number(all[n].id), all[n].id, static_cast<int>(n));
  }
  std::vector<int> order, new_index(all.size(), -1);
  while (!ready.empty()) {
    const int n = std::get<2>(ready.top());
    ready.pop();
    new_index[static_cast<size_t>(n)] = static_cast<int>(order.size());
    order.push_back(n);
    for (int m : out[static_cast<size_t>(n)]) {
      if (--waiting[static_cast<size_t>(m)] == 0) ready.emplace(id_number(all[m].id), all[m].id, m);
    }
  }
  const size_t kept = static_cast<size_t>(std::count(dropped.begin(), dropped.end(), false));
  BATON_CHECK(order.size() == kept, source, ": the edges form a cycle (expected a DAG)");
  BATON_CHECK(!order.empty(), source, ": no node is left once the Input and __getitem__ nodes are dropped");

  PipeDreamGraph graph;
  graph.source = std::string(source);
  for (int n : order) graph.nodes.push_back(all[static_cast<size_t>(n)]);
  for (const auto& [from, to] : edges) {
    const int f = new_index[static_cast<size_t>(from)], t = new_index[static_cast<size_t>(to)];
    if (t < 0) continue;
    if (input[static_cast<size_t>(from)]) {
      if (std::find(graph.input_consumers.begin(), graph.input_consumers.end(), t) == graph.input_consumers.end()) {
        graph.input_consumers.push_back(t);
      }
    } else if (f >= 0) {
      graph.nodes[static_cast<size_t>(f)].consumers.push_back(t);
      graph.nodes[static_cast<size_t>(t)].producers.push_back(f);
    }
  }
  return graph;
}

PipeDreamGraph read_pipedream_graph(const std::string& path) {
  return parse_pipedream_graph(read_regular_file(path, path + ": cannot open the PipeDream profile"), path);
}

}  // namespace baton::parallel
